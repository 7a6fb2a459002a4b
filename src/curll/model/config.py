"""The model's shape: :class:`ModelConfig`, the single source of it, and the named presets.

:data:`PRESETS` names the shapes we train: ``smollm2-135m`` is the paper's model (SmolLM2-135M),
the others fit a CPU with the same proportions. :func:`preset` gives one with the vocabulary of
the tokenizer actually used. The tiny random model of ``llm_models`` (``kind: random``) is a
:class:`ModelConfig` too, built from its params.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

__all__ = ["PRESETS", "Init", "ModelConfig", "preset"]

#: how the weights are drawn (:meth:`curll.model.llama.CausalLM.reset_parameters`)
Init = Literal["kaiming", "normal"]


@dataclass(frozen=True)
class ModelConfig:
    """A Llama decoder's shape: vocabulary, hidden width, layers, query and key/value heads
    (grouped-query attention), SwiGLU width, RMSNorm epsilon, RoPE base, longest position,
    and whether the output layer shares the input embedding. Defaults: SmolLM2-135M."""

    vocab_size: int = 49152
    hidden: int = 576
    layers: int = 30
    heads: int = 9
    kv_heads: int = 3
    ffn: int = 1536
    norm_eps: float = 1e-5
    rope_theta: float = 100000.0
    max_positions: int = 8192
    tie_embeddings: bool = True

    def __post_init__(self) -> None:
        if self.hidden % self.heads or self.heads % self.kv_heads:
            raise ValueError("hidden must be a multiple of heads, and heads of kv_heads")

    def train_flops(self, parameters: int, context: int, tokens: float, trained: float) -> float:
        """Forward + backward FLOPs (PaLM appendix B) for ``tokens`` positions of which
        ``trained`` carry a loss: 6 per weight per position for every matrix but the output
        layer, which is applied at the trained positions only (6 * V * D each; the input
        embedding is a lookup, no FLOPs), plus attention scores and values at
        12 * layers * hidden * context per position (a full causal row, the usual convention).
        ``parameters`` counts a tied embedding once."""
        out_layer = self.vocab_size * self.hidden
        body = parameters - out_layer * (1 if self.tie_embeddings else 2)
        per_position = 6.0 * body + 12.0 * self.layers * self.hidden * context
        return per_position * tokens + 6.0 * out_layer * trained


PRESETS = {
    # SmolLM2-135M: 134,515,008 parameters with its 49,152-token vocabulary
    "smollm2-135m": ModelConfig(),
    # CPU-sized shapes with the same proportions (GQA 3:1 or 2:1, SwiGLU, tied embeddings)
    "smollm2-8m": ModelConfig(hidden=192, layers=6, heads=6, kv_heads=2, ffn=512, max_positions=2048),
    "tiny": ModelConfig(hidden=64, layers=2, heads=4, kv_heads=2, ffn=192, max_positions=2048),
}


def preset(name: str, *, vocab_size: int | None = None) -> ModelConfig:
    """A preset's shape, with the vocabulary of the tokenizer actually used."""
    if name not in PRESETS:
        raise KeyError(f"unknown model preset {name!r}; known: {', '.join(PRESETS)}")
    cfg = PRESETS[name]
    return replace(cfg, vocab_size=vocab_size) if vocab_size else cfg
