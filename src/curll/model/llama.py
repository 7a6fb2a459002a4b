"""The language model: a Llama-architecture decoder (SmolLM2's) in one readable file.

Its shape is a :class:`~curll.model.config.ModelConfig`. Module and parameter names follow
Hugging Face's ``LlamaForCausalLM`` exactly, so :func:`curll.model.hf.save_hf` writes a folder
that ``AutoModelForCausalLM.from_pretrained`` loads with identical outputs.
:func:`from_seed` draws an untrained model's weights from a seed.

Shapes: B batch, T time, D hidden, H query heads, K key/value heads, E = D / H head dim,
V vocab. Packed rows carry ``position_ids`` (restart at 0 for every document) and
``doc_ids``: attention never crosses a document boundary
(:class:`~curll.model.attention.Documents`: flash attention over variable-length runs on a
GPU, a block-diagonal causal mask elsewhere).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F  # noqa: N812 (the usual torch alias)
from torch import nn

from curll.model.attention import Documents, attend
from curll.model.config import Init, ModelConfig
from curll.model.loss import output_loss

__all__ = ["CausalLM", "from_seed", "rope"]


class LlamaRMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.variance_epsilon = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # normalise in float32: bf16 sums of squares lose precision over D = 576 values
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return self.weight * h.to(x.dtype)


def rope(position_ids: torch.Tensor, dim: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin of shape (B, T, E) for positions (B, T); HF's half-split layout."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, device=position_ids.device).float() / dim))
    freqs = position_ids[..., None].float() * inv_freq  # (B, T, E/2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg, e = cfg, cfg.hidden // cfg.heads
        self.q_proj = nn.Linear(cfg.hidden, cfg.heads * e, bias=False)
        self.k_proj = nn.Linear(cfg.hidden, cfg.kv_heads * e, bias=False)
        self.v_proj = nn.Linear(cfg.hidden, cfg.kv_heads * e, bias=False)
        self.o_proj = nn.Linear(cfg.heads * e, cfg.hidden, bias=False)

    def forward(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, docs: Documents | None
    ) -> torch.Tensor:
        b, t, _ = x.shape
        h, k, e = self.cfg.heads, self.cfg.kv_heads, self.cfg.hidden // self.cfg.heads
        q = self.q_proj(x).view(b, t, h, e)  # (B, T, H, E)
        kk = self.k_proj(x).view(b, t, k, e)  # (B, T, K, E)
        v = self.v_proj(x).view(b, t, k, e)
        cos, sin = cos[:, :, None].to(q.dtype), sin[:, :, None].to(q.dtype)  # (B, T, 1, E)
        q, kk = q * cos + _rotate_half(q) * sin, kk * cos + _rotate_half(kk) * sin
        y = attend(q, kk, v, docs)  # (B, T, H * E)
        out: torch.Tensor = self.o_proj(y)
        return out


class LlamaMLP(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden, cfg.ffn, bias=False)
        self.up_proj = nn.Linear(cfg.hidden, cfg.ffn, bias=False)
        self.down_proj = nn.Linear(cfg.ffn, cfg.hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))  # SwiGLU
        return out


class LlamaDecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.input_layernorm = LlamaRMSNorm(cfg.hidden, cfg.norm_eps)
        self.self_attn = LlamaAttention(cfg)
        self.post_attention_layernorm = LlamaRMSNorm(cfg.hidden, cfg.norm_eps)
        self.mlp = LlamaMLP(cfg)

    def forward(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, docs: Documents | None
    ) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, docs)  # pre-norm residual
        out: torch.Tensor = x + self.mlp(self.post_attention_layernorm(x))
        return out


class LlamaModel(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden)
        self.layers = nn.ModuleList(LlamaDecoderLayer(cfg) for _ in range(cfg.layers))
        self.norm = LlamaRMSNorm(cfg.hidden, cfg.norm_eps)


class CausalLM(nn.Module):
    """``forward(input_ids, position_ids=None, doc_ids=None, select=None, cu_seqlens=None)
    -> logits (B, T, V)``, or (N, V) at N positions: where the bool ``select`` (B, T) is true,
    or at the flat indices into B * T of an int64 ``select`` (N,) (no GPU sync, unlike a mask).
    ``cu_seqlens``: the runs of ``doc_ids`` made on the host, for the varlen kernel.
    With ``targets`` (N,) for the selected positions, the summed cross-entropy (float32,
    0-dim) instead of logits, computed ``loss_chunk`` positions at a time when > 0
    (:func:`~curll.model.loss.output_loss`: the (N, V) logits never whole in memory)."""

    def __init__(self, cfg: ModelConfig, init: Init = "kaiming") -> None:
        super().__init__()
        self.config = cfg
        self.varlen = True  # documents through flash varlen attention where it runs (False: mask)
        self.model = LlamaModel(cfg)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab_size, bias=False)
        if cfg.tie_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        self.reset_parameters(init)

    def reset_parameters(self, init: Init = "kaiming") -> None:
        """``kaiming`` (the paper's): Kaiming normal (fan-in, gain sqrt 2) for every matrix.
        ``normal`` (SmolLM2/GPT-2 style): std 0.02 for every matrix, and the two projections
        that write into the residual stream (``o_proj``, ``down_proj``) scaled by
        1 / sqrt(2 * layers), so the stream's variance stays near the embedding's after all
        2 * layers additions. Norm weights 1 in both."""
        residual = 0.02 / math.sqrt(2 * self.config.layers)
        for name, module in self.named_modules():
            if isinstance(module, nn.Linear | nn.Embedding):
                if init == "kaiming":
                    nn.init.kaiming_normal_(module.weight)
                elif name.endswith(("o_proj", "down_proj")):
                    nn.init.normal_(module.weight, std=residual)
                elif not (self.config.tie_embeddings and module is self.lm_head):  # tied: set once
                    nn.init.normal_(module.weight, std=0.02)
            elif isinstance(module, LlamaRMSNorm):
                nn.init.ones_(module.weight)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())  # a tied matrix counts once

    def forward(
        self,
        input_ids: torch.Tensor,
        position_ids: torch.Tensor | None = None,
        doc_ids: torch.Tensor | None = None,
        select: torch.Tensor | None = None,
        cu_seqlens: torch.Tensor | None = None,
        targets: torch.Tensor | None = None,
        loss_chunk: int = 0,
    ) -> torch.Tensor:
        b, t = input_ids.shape
        if position_ids is None:
            position_ids = torch.arange(t, device=input_ids.device).expand(b, t)
        dtype = (
            torch.get_autocast_dtype("cuda")
            if torch.is_autocast_enabled("cuda")
            else self.lm_head.weight.dtype
        )
        docs = None if doc_ids is None else Documents.of(doc_ids, dtype, varlen=self.varlen, cu=cu_seqlens)
        cos, sin = rope(position_ids, self.config.hidden // self.config.heads, self.config.rope_theta)
        x = self.model.embed_tokens(input_ids)  # (B, T, D)
        for layer in self.model.layers:
            x = layer(x, cos, sin, docs)
        x = self.model.norm(x)
        if select is not None:
            # training with answer-only loss: project only the trained positions. The output
            # layer is D x V (V = 49,152 for the 135M preset: 28.3M of its 134.5M weights,
            # 21% of the weight FLOPs of a position where it is applied)
            x = x[select] if select.dtype == torch.bool else x.flatten(0, 1)[select]  # (N, D)
        if targets is not None:
            return output_loss(x, self.lm_head.weight, targets, loss_chunk)
        logits: torch.Tensor = self.lm_head(x)  # (B, T, V) or (N, V)
        return logits


def from_seed(cfg: ModelConfig, init: Init, seed: int) -> CausalLM:
    """An untrained model whose weights are drawn with torch's global generator seeded ``seed``
    (the baseline of zero-shot transfer: the same weights for the same preset and seed)."""
    torch.manual_seed(seed)
    return CausalLM(cfg, init)
