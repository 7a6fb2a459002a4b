"""Document-aware attention for packed rows: which positions may attend to which.

A packed row holds several documents; a token attends only to earlier tokens of its own
document. :class:`Documents` carries that rule in the form the kernel in use needs: on a
CUDA device in bf16/fp16, the flattened runs of each document (``cu_seqlens``) for
flash-attention's variable-length kernel, with no mask in memory and no work across
documents; elsewhere a (B, 1, T, T) block-diagonal causal mask for SDPA. :func:`attend`
runs the kernel the :class:`Documents` asks for.

Training builds ``cu_seqlens`` on the host (:func:`cu_seqlens_host`, from the packed rows it
already holds) and passes ``max_len`` = T, an upper bound the kernel accepts (it only sizes
the launch grid; blocks past a run's end return at once): then nothing in a forward waits for
the GPU, and a compiled layer sees one constant int and a ``cu_seqlens`` of dynamic length
(one graph, no recompiles as the number of documents changes from step to step).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812 (the usual torch alias)


def varlen_runs(device: torch.device, dtype: torch.dtype) -> bool:
    """Whether the flash varlen kernel serves this device and compute dtype."""
    return _VARLEN is not None and device.type == "cuda" and dtype in (torch.bfloat16, torch.float16)


@dataclass(frozen=True)
class Documents:
    """Where attention may look, built once per forward from ``doc_ids`` (B, T).

    On a CUDA device in bf16/fp16, ``cu_seqlens`` (S + 1,) int32 delimits the S runs of equal
    doc id over the flattened B * T positions (each row starts a run) and ``max_len`` bounds
    the longest: flash-attention's variable-length kernel then attends inside each run, with no
    mask in memory and no work on the other documents. Elsewhere ``mask`` (B, 1, T, T) is the
    block-diagonal causal mask for SDPA (query i sees key j <= i of its own document only)."""

    mask: torch.Tensor | None = None
    cu_seqlens: torch.Tensor | None = None
    max_len: int = 0

    @staticmethod
    def of(
        doc_ids: torch.Tensor, dtype: torch.dtype, *, varlen: bool = True, cu: torch.Tensor | None = None
    ) -> Documents:
        """``cu``: the runs of ``doc_ids`` already made on the host (:func:`cu_seqlens_host`),
        used when the varlen kernel runs. ``varlen=False`` forces the mask (for comparisons)."""
        if varlen and varlen_runs(doc_ids.device, dtype):
            if cu is None:
                cu, longest = cu_seqlens(doc_ids)
                return Documents(cu_seqlens=cu, max_len=longest)
            torch._dynamo.maybe_mark_dynamic(cu, 0)  # its length follows the document count
            return Documents(cu_seqlens=cu, max_len=doc_ids.shape[1])
        t = doc_ids.shape[1]
        causal = torch.ones(t, t, dtype=torch.bool, device=doc_ids.device).tril()
        return Documents(mask=((doc_ids[:, :, None] == doc_ids[:, None, :]) & causal)[:, None])


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, docs: Documents | None) -> torch.Tensor:
    """Causal attention of q (B, T, H, E) over k, v (B, T, K, E) -> (B, T, H * E), inside
    documents when ``docs`` is given. Each key/value head serves H/K consecutive query heads
    (HF's repeat_kv layout); the kernels read the shared head in place, no K/V copy."""
    b, t, h, e = q.shape
    if docs is not None and docs.cu_seqlens is not None:
        assert _VARLEN is not None  # Documents.of builds cu_seqlens only where it runs
        flat = (z.reshape(b * t, -1, e) for z in (q, k, v))  # (B*T, H|K, E)
        return _VARLEN(*flat, docs.cu_seqlens, docs.max_len).view(b, t, h * e)
    qh, kh, vh = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # (B, H|K, T, E)
    if docs is None:
        y = F.scaled_dot_product_attention(qh, kh, vh, is_causal=True, enable_gqa=True)
    else:
        y = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=docs.mask, enable_gqa=True)
    return y.transpose(1, 2).reshape(b, t, h * e)


def cu_seqlens(doc_ids: torch.Tensor) -> tuple[torch.Tensor, int]:
    """(cu_seqlens (S + 1,) int32 on ``doc_ids``' device, longest run): :func:`cu_seqlens_host`
    of a tensor. Copies ``doc_ids`` to the host (a GPU sync): training passes host-made runs."""
    cu = cu_seqlens_host(doc_ids.cpu().numpy())
    return torch.from_numpy(cu).to(doc_ids.device), int(np.diff(cu).max())


def cu_seqlens_host(doc_ids: np.ndarray) -> np.ndarray:
    """(S + 1,) int32: the runs of equal doc id over the flattened (B, T) positions of
    ``doc_ids``, a new run at every row start (a row's padding is one run of its own)."""
    b, t = doc_ids.shape
    flat = doc_ids.reshape(-1)
    starts = np.ones(flat.shape, dtype=bool)
    starts[1:] = flat[1:] != flat[:-1]
    starts[::t] = True
    return np.append(np.flatnonzero(starts), b * t).astype(np.int32)


def _varlen() -> Callable[..., torch.Tensor] | None:
    """torch's flash-attention varlen kernel (torch >= 2.10), adapted to one call shape:
    causal, grouped-query. Older releases name causality ``is_causal`` and lack
    ``enable_gqa``; there K/V are expanded to the query heads first. None: not available."""
    try:
        from torch.nn.attention.varlen import varlen_attn
    except ImportError:
        return None
    names = inspect.signature(varlen_attn).parameters
    causal: dict[str, Any] = {"window_size": (-1, 0)} if "window_size" in names else {"is_causal": True}
    gqa = "enable_gqa" in names

    def call(
        q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu: torch.Tensor, longest: int
    ) -> torch.Tensor:
        if not gqa:  # (N, K, E) -> (N, H, E): each K/V head for H/K consecutive query heads
            k, v = (z.repeat_interleave(q.shape[1] // z.shape[1], dim=1) for z in (k, v))
        extra: dict[str, Any] = {"enable_gqa": True} if gqa else {}
        out = varlen_attn(q, k, v, cu, cu, longest, longest, **causal, **extra)
        return out if isinstance(out, torch.Tensor) else out[0]

    return call


_VARLEN = _varlen()
