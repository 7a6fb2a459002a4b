"""Grouped-query attention for Hugging Face models without copying K/V: ``curll_sdpa``.

Transformers' ``sdpa`` attention expands K and V to one copy per query head
(``repeat_kv``) whenever a padding mask is present, which is every batched decode step
with left padding. For SmolLM2-135M (9 query heads, 3 KV heads) that copies the whole
KV cache three times per layer per step.

:func:`folded_sdpa` instead folds each KV head's group of query heads into the query
length, so one SDPA call covers the group against the un-copied K/V::

    query (B, H, Lq, d) -> (B, Hkv, G*Lq, d)      G = H / Hkv, head h uses KV head h // G
    key, value (B, Hkv, T, d)                     as cached
    mask (B, 1, Lq, T) -> (B, 1, G*Lq, T)         the same rows for every head of a group

The result is the same attention (equal logits, tested) with no K/V copy.
:func:`register` makes it available as ``attn_implementation="curll_sdpa"`` together
with the boolean mask builder transformers uses for ``sdpa``.
"""

from __future__ import annotations

from typing import Any

import torch

NAME = "curll_sdpa"
_registered = False


def folded_sdpa(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    is_causal: bool | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """Transformers attention-interface signature; returns (B, Lq, H, d) and no weights."""
    b, h, lq, d = query.shape
    hkv, t = key.shape[1], key.shape[-2]
    g = h // hkv
    q = query.reshape(b, hkv, g * lq, d)  # heads of one KV group are adjacent: h = kv * g + i
    mask = attention_mask
    if mask is not None:
        mask = mask[:, :, :, :t]
        if g > 1 and lq > 1:  # one mask row per (group member, query position)
            mask = mask.expand(b, 1, lq, t).repeat(1, 1, g, 1)
    elif lq > 1:  # no padding: plain causal, with the cache (t - lq keys) visible to every query
        causal = torch.ones(lq, t, dtype=torch.bool, device=q.device).tril(t - lq)
        mask = causal.repeat(g, 1)[None, None]
    out = torch.nn.functional.scaled_dot_product_attention(
        q, key, value, attn_mask=mask, dropout_p=dropout if module.training else 0.0, scale=scaling
    )
    return out.reshape(b, h, lq, d).transpose(1, 2).contiguous(), None


def register() -> str:
    """Register ``curll_sdpa`` with transformers (idempotent); returns its name."""
    global _registered
    if not _registered:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

        AttentionInterface.register(NAME, folded_sdpa)
        AttentionMaskInterface.register(NAME, sdpa_mask)
        _registered = True
    return NAME
