"""Document-aware attention for packed rows: which positions may attend to which.

A packed row holds several documents; a token attends only to earlier tokens of its own
document. :class:`Documents` carries that rule in the form the kernel in use needs: on a
CUDA device in bf16/fp16, the flattened runs of each document (``cu_seqlens``) for
flash-attention's variable-length kernel, with no mask in memory and no work across
documents; elsewhere a (B, 1, T, T) block-diagonal causal mask for SDPA.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class Documents:
    """Where attention may look, built once per forward from ``doc_ids`` (B, T).

    On a CUDA device in bf16/fp16, ``cu_seqlens`` (S + 1,) int32 delimits the S runs of equal
    doc id over the flattened B * T positions (each row starts a run) and ``max_len`` is the
    longest: flash-attention's variable-length kernel then attends inside each run, with no
    mask in memory and no work on the other documents. Elsewhere ``mask`` (B, 1, T, T) is the
    block-diagonal causal mask for SDPA (query i sees key j <= i of its own document only)."""

    mask: torch.Tensor | None = None
    cu_seqlens: torch.Tensor | None = None
    max_len: int = 0

    @staticmethod
    def of(doc_ids: torch.Tensor, dtype: torch.dtype, *, varlen: bool = True) -> Documents:
        """``varlen=False`` forces the mask (for comparisons)."""
        fast = varlen and doc_ids.is_cuda and dtype in (torch.bfloat16, torch.float16)
        if fast and _VARLEN is not None:
            cu, longest = cu_seqlens(doc_ids)
            return Documents(cu_seqlens=cu, max_len=longest)
        t = doc_ids.shape[1]
        causal = torch.ones(t, t, dtype=torch.bool, device=doc_ids.device).tril()
        return Documents(mask=((doc_ids[:, :, None] == doc_ids[:, None, :]) & causal)[:, None])


def cu_seqlens(doc_ids: torch.Tensor) -> tuple[torch.Tensor, int]:
    """(cu_seqlens (S + 1,) int32, longest run): the runs of equal doc id over the flattened
    (B, T) positions, a new run at every row start (a row's padding is one run of its own)."""
    b, t = doc_ids.shape
    flat = doc_ids.reshape(-1)
    starts = torch.ones_like(flat, dtype=torch.bool)
    starts[1:] = flat[1:] != flat[:-1]
    starts[::t] = True
    begin = torch.nonzero(starts).flatten()
    cu = torch.cat([begin, begin.new_tensor([b * t])]).to(torch.int32)
    return cu, int((cu[1:] - cu[:-1]).max())  # one host sync per forward


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
