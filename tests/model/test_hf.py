"""The Hugging Face folder: transformers loads it with our logits, and its bytes are stable."""

from __future__ import annotations

from typing import Any

import torch

from curll.llm.bpe import train_bpe
from curll.model.config import preset
from curll.model.hf import load_hf, save_hf
from curll.model.llama import CausalLM


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
