"""The model: the 135M preset's size, the init, document masking, and HF round trip."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from curll.llm.embedded import train_bpe
from curll.train.hf import load_hf, save_hf
from curll.train.model import CausalLM, preset


def test_smollm2_135m_preset_has_the_paper_parameter_count():
    with torch.device("meta"):
        model = CausalLM(preset("smollm2-135m"))
    assert model.num_parameters() == 134_515_008
    assert model.lm_head.weight is model.model.embed_tokens.weight


def test_init_is_kaiming_normal_with_unit_norms():
    torch.manual_seed(0)
    model = CausalLM(preset("smollm2-8m", vocab_size=4096))
    layer: Any = model.model.layers[0]
    w = layer.mlp.up_proj.weight  # (ffn, D): fan-in D
    assert w.std().item() == pytest.approx((2 / 192) ** 0.5, rel=0.05)
    assert torch.equal(model.model.norm.weight, torch.ones(192))


def test_documents_in_a_packed_row_do_not_see_each_other():
    torch.manual_seed(0)
    model = CausalLM(preset("tiny", vocab_size=100)).eval()
    a, b = torch.randint(0, 100, (1, 5)), torch.randint(0, 100, (1, 4))
    packed = torch.cat([a, b], dim=1)
    pos = torch.tensor([[0, 1, 2, 3, 4, 0, 1, 2, 3]])
    doc = torch.tensor([[0, 0, 0, 0, 0, 1, 1, 1, 1]])
    with torch.no_grad():
        together = model(packed, position_ids=pos, doc_ids=doc)
        alone = model(b)
        first = model(a)
    torch.testing.assert_close(together[:, 5:], alone, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(together[:, :5], first, rtol=1e-5, atol=1e-5)


def test_saved_folder_loads_in_transformers_with_identical_logits(tmp_path):
    from transformers import AutoModelForCausalLM

    tok = train_bpe(["a small corpus of words for the tokenizer"] * 10, 300)
    torch.manual_seed(0)
    model = CausalLM(preset("tiny", vocab_size=len(tok))).eval()
    save_hf(model, tok, tmp_path / "m")
    hf: Any = AutoModelForCausalLM.from_pretrained(tmp_path / "m")
    hf.eval()
    ids = torch.randint(0, len(tok), (2, 7))
    with torch.no_grad():
        torch.testing.assert_close(hf(ids).logits, model(ids), rtol=1e-4, atol=1e-4)
        back = load_hf(tmp_path / "m").eval()
        torch.testing.assert_close(back(ids), model(ids))


def test_training_flops_per_token_of_the_135m_preset():
    cfg = preset("smollm2-135m")
    # 6 x 134,515,008 weights + 12 x 30 layers x 576 hidden x 1024 context
    assert cfg.train_flops_per_token(134_515_008, 1024) == 807_090_048 + 212_336_640


def test_mfu_is_reported_for_known_gpus_in_bf16_only(monkeypatch):
    from curll.train import runs

    assert runs.mfu(1e12, "cpu", torch.float32) is None
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "NVIDIA H100 80GB HBM3")
    assert runs.mfu(98.9e12, "cuda", torch.bfloat16) == pytest.approx(0.1)
    assert runs.mfu(98.9e12, "cuda", torch.float32) is None
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Some GPU")
    assert runs.mfu(98.9e12, "cuda", torch.bfloat16) is None


def test_select_projects_only_the_chosen_positions():
    torch.manual_seed(0)
    model = CausalLM(preset("tiny", vocab_size=100)).eval()
    ids = torch.randint(0, 100, (2, 7))
    select = torch.rand(2, 7) < 0.5
    with torch.no_grad():
        full, some = model(ids), model(ids, select=select)
    assert some.shape == (int(select.sum()), 100)
    torch.testing.assert_close(some, full[select])


def test_saved_files_are_byte_identical_for_identical_weights(tmp_path):
    import hashlib

    tok = train_bpe(["a small corpus of words for the tokenizer"] * 10, 300)

    def saved(name: str) -> str:
        torch.manual_seed(0)
        save_hf(CausalLM(preset("tiny", vocab_size=len(tok))), tok, tmp_path / name)
        return hashlib.md5((tmp_path / name / "model.safetensors").read_bytes()).hexdigest()

    assert saved("a") == saved("b")
    from safetensors import safe_open

    with safe_open(str(tmp_path / "a" / "model.safetensors"), "pt") as f:
        assert "lm_head.weight" not in set(f.keys())  # tied: stored once, as HF does
