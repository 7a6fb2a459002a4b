"""The model: the 135M preset's size, the init, document masking, and HF round trip."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import torch
import torch.nn.functional as F  # noqa: N812

from curll.llm.embedded import train_bpe
from curll.train.attention import cu_seqlens_host
from curll.train.hf import load_hf, save_hf
from curll.train.model import CausalLM, Documents, _rotate_half, cu_seqlens, preset, rope


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


def test_normal_init_is_small_and_scales_the_residual_outputs_by_depth():
    torch.manual_seed(0)
    model = CausalLM(preset("smollm2-8m", vocab_size=4096), init="normal")
    layer: Any = model.model.layers[0]
    assert layer.mlp.up_proj.weight.std().item() == pytest.approx(0.02, rel=0.05)
    assert model.model.embed_tokens.weight.std().item() == pytest.approx(0.02, rel=0.05)
    for w in (layer.mlp.down_proj.weight, layer.self_attn.o_proj.weight):  # 6 layers: / sqrt(12)
        assert w.std().item() == pytest.approx(0.02 / 12**0.5, rel=0.05)
    assert model.lm_head.weight is model.model.embed_tokens.weight


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


def _before(attn: Any, x: torch.Tensor, pos: torch.Tensor, doc: torch.Tensor) -> torch.Tensor:
    """The attention as it was: K/V copied for every query head, a dense block mask."""
    b, t, _ = x.shape
    h, k = attn.cfg.heads, attn.cfg.kv_heads
    e = attn.cfg.hidden // h
    cos, sin = rope(pos, e, attn.cfg.rope_theta)
    cos, sin = cos[:, None], sin[:, None]
    q = attn.q_proj(x).view(b, t, h, e).transpose(1, 2)
    kk = attn.k_proj(x).view(b, t, k, e).transpose(1, 2)
    v = attn.v_proj(x).view(b, t, k, e).transpose(1, 2)
    q, kk = q * cos + _rotate_half(q) * sin, kk * cos + _rotate_half(kk) * sin
    kk, v = kk.repeat_interleave(h // k, dim=1), v.repeat_interleave(h // k, dim=1)
    mask = ((doc[:, :, None] == doc[:, None, :]) & torch.ones(t, t, dtype=torch.bool).tril())[:, None]
    y = F.scaled_dot_product_attention(q, kk, v, attn_mask=mask)
    out: torch.Tensor = attn.o_proj(y.transpose(1, 2).reshape(b, t, h * e))
    return out


def packed_batch(vocab: int, device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """2 rows of 12: documents of 5, 4 and 3 (padding -1 at the end of row 1), 7 and 5."""
    doc = torch.tensor([[0, 0, 0, 0, 0, 1, 1, 1, 1, -1, -1, -1], [2] * 7 + [3] * 5], device=device)
    pos = torch.tensor([[0, 1, 2, 3, 4, 0, 1, 2, 3, 0, 0, 0], [*range(7), *range(5)]], device=device)
    ids = torch.randint(0, vocab, doc.shape, device=device)
    return ids, pos, doc


def test_attention_without_kv_copies_equals_the_copying_dense_mask_version():
    torch.manual_seed(0)
    model = CausalLM(preset("tiny", vocab_size=100)).eval()
    attn: Any = model.model.layers[0].self_attn
    _ids, pos, doc = packed_batch(100)
    x = torch.randn(2, 12, 64)
    cos, sin = rope(pos, 16, model.config.rope_theta)
    with torch.no_grad():
        now = attn(x, cos, sin, Documents.of(doc, torch.float32))
        torch.testing.assert_close(now, _before(attn, x, pos, doc), rtol=1e-5, atol=1e-6)


def test_cu_seqlens_delimit_documents_and_row_starts():
    doc = torch.tensor([[0, 0, 1, 1, 1, -1], [-1, 2, 2, 2, 3, 3]])
    cu, longest = cu_seqlens(doc)
    assert cu.tolist() == [0, 2, 5, 6, 7, 10, 12] and cu.dtype == torch.int32 and longest == 3


@pytest.mark.skipif(not torch.cuda.is_available(), reason="flash varlen attention needs a CUDA GPU")
def test_varlen_attention_on_cuda_equals_the_dense_mask_forward_and_backward():
    torch.manual_seed(0)
    model = CausalLM(preset("smollm2-8m", vocab_size=512)).cuda().to(torch.bfloat16)
    _ids, pos, doc = packed_batch(512, "cuda")
    varlen = Documents.of(doc, torch.bfloat16)
    assert varlen.cu_seqlens is not None and varlen.mask is None
    # as training passes them: runs made on the host, max_len the row length (an upper bound)
    host = Documents.of(doc, torch.bfloat16, cu=torch.from_numpy(cu_seqlens_host(doc.cpu().numpy())).cuda())
    assert host.max_len == 12 and varlen.max_len == 7
    dense = Documents(mask=Documents.of(doc.cpu(), torch.float32).mask.cuda())  # type: ignore[union-attr]
    attn: Any = model.model.layers[0].self_attn
    cos, sin = rope(pos, 32, model.config.rope_theta)
    x = torch.randn(2, 12, 192, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    out: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    for name, docs in (("varlen", varlen), ("host", host), ("dense", dense)):
        x.grad = None
        y = attn(x, cos, sin, docs)
        y.float().square().sum().backward()
        assert x.grad is not None
        out[name] = (y.detach().float(), x.grad.detach().float())
    used = doc >= 0  # padding positions attend to padding: not compared
    for i, what in enumerate(("output", "gradient")):
        b = out["dense"][i][used]
        for name in ("varlen", "host"):
            a = out[name][i][used]
            # bf16 kernels sum in different orders: compare as a share of the norm
            assert ((a - b).norm() / b.norm()).item() < 1e-2, (name, what)


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


def test_training_flops_count_the_output_layer_at_trained_positions_only():
    cfg = preset("smollm2-135m")
    out_layer = 49_152 * 576  # 28,311,552 weights: 21% of the 134.5M
    per_position = 6 * (134_515_008 - out_layer) + 12 * 30 * 576 * 1024
    assert cfg.train_flops(134_515_008, 1024, tokens=1000, trained=0) == per_position * 1000
    assert (
        cfg.train_flops(134_515_008, 1024, tokens=1000, trained=400)
        == per_position * 1000 + 6 * out_layer * 400
    )
    assert out_layer / 134_515_008 == pytest.approx(0.21, abs=0.005)


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


@torch.library.custom_op("curll_test::varlen_reference", mutates_args=())
def varlen_reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu: torch.Tensor, max_len: int
) -> torch.Tensor:
    """What the flash varlen kernel computes, on a CPU: causal attention inside each run of
    ``cu`` over (N, H|K, E) inputs. An opaque op to the compiler, as the real kernel is."""
    out = torch.zeros_like(q)
    bounds = cu.tolist()
    for a, b in itertools.pairwise(bounds):
        assert b - a <= max_len
        qs, ks, vs = (z[a:b].transpose(0, 1) for z in (q, k, v))  # (H|K, n, E)
        y = F.scaled_dot_product_attention(qs, ks, vs, is_causal=True, enable_gqa=True)
        out[a:b] = y.transpose(0, 1)
    return out


@varlen_reference.register_fake
def _(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu: torch.Tensor, max_len: int) -> torch.Tensor:
    return torch.empty_like(q)


def test_host_runs_feed_one_compiled_graph_as_the_documents_change(monkeypatch):
    """The varlen branch with host-made runs (the kernel stood in by a CPU reference): equal
    to the dense mask, and a compiled layer traced once for batches of 2 to 5 documents per
    row (a max_len read from the data made it recompile as the longest document changed)."""
    from torch._dynamo.testing import CompileCounter

    from curll.train import attention

    monkeypatch.setattr(attention, "_VARLEN", varlen_reference)
    monkeypatch.setattr(attention, "varlen_runs", lambda device, dtype: True)
    torch.manual_seed(0)
    model = CausalLM(preset("tiny", vocab_size=100)).eval()
    layer = model.model.layers[0]
    torch._dynamo.reset()
    counter = CompileCounter()
    compiled = torch.compile(layer, backend=counter)
    t = 24
    for n_docs in (2, 3, 5, 4):
        cuts = sorted(torch.randperm(t - 1)[: n_docs - 1].add(1).tolist())
        row = torch.zeros(t, dtype=torch.long)
        pos = torch.zeros(t, dtype=torch.long)
        for i, (a, b) in enumerate(zip([0, *cuts], [*cuts, t], strict=True)):
            row[a:b], pos[a:b] = i, torch.arange(b - a)
        doc, pos = torch.stack([row, row.flip(0)]), torch.stack([pos, pos])  # 2 rows, different runs
        cu = torch.from_numpy(attention.cu_seqlens_host(doc.numpy()))
        cos, sin = rope(pos, 16, model.config.rope_theta)
        x = torch.randn(2, t, 64)
        varlen = Documents.of(doc, torch.float32, cu=cu)
        assert varlen.cu_seqlens is cu and varlen.max_len == t
        with torch.no_grad():
            got = compiled(x, cos, sin, varlen)
            want = layer(x, cos, sin, Documents.of(doc, torch.float32, varlen=False))
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert counter.frame_count == 1
