"""Document-aware attention: no K/V copies, runs of documents, the flash varlen path."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F  # noqa: N812

from curll.model.attention import Documents, cu_seqlens, cu_seqlens_host
from curll.model.config import preset
from curll.model.llama import CausalLM, _rotate_half, rope


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


def test_cu_seqlens_host_starts_a_run_at_every_row():
    doc = np.array([[0, 0, 1, 1, 1, -1], [-1, 2, 2, 2, 3, 3], [3, 3, 3, 3, 3, 3]])
    assert cu_seqlens_host(doc).tolist() == [0, 2, 5, 6, 7, 10, 12, 18]


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

    from curll.model import attention

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
