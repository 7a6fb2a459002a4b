"""Per-row, schema-constrained, reproducible sampling for the decode loop (:mod:`curll.llm.decode`).

Each live row of a batch owns a :class:`RowState`: its xgrammar matcher (or none, for a
request without a schema), a ``torch.Generator`` seeded from the request's content key,
its sampling params and the tokens it has produced. One decode step:

1. :func:`apply_bitmask` masks, for every constrained row, the tokens its grammar forbids
   (the bitmask was filled when the row accepted its previous token);
2. :func:`sample_rows` applies each row's repetition penalty, temperature and top-p and
   draws a token by the Gumbel-max trick: ``argmax(logits / T + Gumbel noise)`` is an
   exact sample from ``softmax(logits / T)``, and the noise comes from the row's own
   generator, so a request's answer does not depend on which requests share its batch;
3. :meth:`RowState.accept` advances the matcher and fills the row's next bitmask. When the
   grammar allows nothing but a stop token (the JSON value is closed), the row is done
   at once: no forward pass is spent on asking for the end-of-turn token.

Temperature 0 is greedy. Penalties follow OpenAI's definition (vLLM's and llama.cpp's
too): ``presence_penalty`` is subtracted from the logit of every token the answer has
already used, ``frequency_penalty`` once per use; prompt tokens are never penalised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class RowSpec:
    """How to sample one row: compiled grammar (or None), seed, temperature, top-p, penalty."""

    grammar: Any | None
    seed: int
    temperature: float
    top_p: float
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0


def sample_rows(logits: torch.Tensor, states: Sequence[RowState]) -> list[int]:
    """One token per row of ``logits`` (B, V, already grammar-masked): row i's penalties,
    temperature and top-p, then the argmax of its scores plus Gumbel noise drawn (V values)
    from ``states[i].generator`` (temperature 0: the argmax, no draw), so a row draws what it
    would alone. Batched tensor work and one host sync: on a GPU a row-by-row version spent
    more time waiting than the model computing (tests/llm/test_constrained.py keeps that
    version as the reference)."""
    b, v = logits.shape
    dev = logits.device
    z = (
        torch.stack([s.penalised(logits[i]) for i, s in enumerate(states)])
        if any(s.counts is not None for s in states)
        else logits
    )
    temps = torch.tensor([s.spec.temperature for s in states], dtype=z.dtype, device=dev)
    hot = temps > 0  # temperature 0 is greedy: no scaling, no noise
    z = z / torch.where(hot, temps, torch.ones_like(temps))[:, None]
    top_p = torch.tensor([s.spec.top_p for s in states], dtype=z.dtype, device=dev)
    nucleus = hot & (top_p < 1)
    if bool(nucleus.any()):
        probs = torch.softmax(z, dim=-1)
        sorted_p, order = probs.sort(dim=-1, descending=True)
        # drop a token when the mass before it already reaches top_p (the first always stays)
        drop_sorted = (sorted_p.cumsum(-1) - sorted_p) >= top_p[:, None]
        drop = torch.zeros_like(drop_sorted).scatter(1, order, drop_sorted) & nucleus[:, None]
        z = z.masked_fill(drop, float("-inf"))
    if bool(hot.any()):
        noise = torch.zeros(b, v)
        for i, s in enumerate(states):
            if s.spec.temperature > 0:
                u = torch.rand(v, generator=s.generator).clamp_(1e-10, 1.0 - 1e-7)
                noise[i] = -torch.log(-torch.log(u))
        z = z + noise.to(dev)
    picked: list[int] = z.argmax(dim=-1).tolist()
    return picked


def apply_bitmask(logits: torch.Tensor, bitmask: torch.Tensor, rows: Sequence[int]) -> None:
    """Set to -inf, in place, the logits (B, V) of tokens that ``bitmask`` (R, ceil(V/32) int32,
    one row per entry of ``rows``) forbids. Plain torch: the same code on CPU and CUDA."""
    if not rows:
        return
    idx = torch.tensor(list(rows), dtype=torch.long)
    words = bitmask.to(logits.device)  # (R, W) int32, bit j of word w = token 32 w + j
    shifts = torch.arange(32, device=logits.device, dtype=torch.int32)
    allowed = ((words[:, :, None] >> shifts) & 1).bool().reshape(len(rows), -1)
    vocab = logits.shape[-1]
    if allowed.shape[1] < vocab:  # logits wider than the grammar's vocabulary: the extra ids are padding
        pad = torch.zeros(len(rows), vocab - allowed.shape[1], dtype=torch.bool, device=logits.device)
        allowed = torch.cat([allowed, pad], dim=1)
    sub = logits[idx.to(logits.device)]
    logits[idx.to(logits.device)] = sub.masked_fill(~allowed[:, :vocab], float("-inf"))


class RowState:
    """The sampling state of one live row (see the module docstring).

    ``bitmask`` (1, ceil(V/32) int32) holds the tokens the grammar allows next; it is
    filled at creation and after every accepted token. ``stop_words`` is
    :func:`stop_bitmask` of the stop ids at the same width."""

    def __init__(
        self, spec: RowSpec, prompt: Sequence[int], vocab_size: int, stop_words: torch.Tensor, device: Any
    ) -> None:
        import xgrammar as xgr

        self.spec = spec
        self.stop_words = stop_words
        self.generator = torch.Generator().manual_seed(spec.seed)
        self.matcher = None if spec.grammar is None else xgr.GrammarMatcher(spec.grammar)
        self.bitmask = xgr.allocate_token_bitmask(1, vocab_size)
        if self.matcher is not None:
            self.matcher.fill_next_token_bitmask(self.bitmask, 0)
        self.tokens: list[int] = []
        self.counts: torch.Tensor | None = None  # uses of each token in the answer, when penalised
        if spec.presence_penalty or spec.frequency_penalty:
            self.counts = torch.zeros(vocab_size, dtype=torch.float32, device=device)

    @property
    def constrained(self) -> bool:
        return self.matcher is not None

    def penalised(self, logits: torch.Tensor) -> torch.Tensor:
        if self.counts is None:
            return logits
        used = (self.counts > 0).float()
        return logits - self.spec.presence_penalty * used - self.spec.frequency_penalty * self.counts

    def accept(self, token: int) -> bool:
        """Record ``token``; True when the row is finished: a stop token, or a grammar that
        allows nothing but a stop token next (its JSON value is closed)."""
        word, bit = divmod(token, 32)
        if word < self.stop_words.numel() and (int(self.stop_words[word]) >> bit) & 1:
            return True
        self.tokens.append(token)
        if self.counts is not None:
            self.counts[token] += 1
        if self.matcher is None:
            return False
        if not self.matcher.accept_token(token):
            raise RuntimeError(f"grammar rejected token {token} it allowed one step before")
        self.matcher.fill_next_token_bitmask(self.bitmask, 0)
        return not bool((self.bitmask[0] & ~self.stop_words).any())


def stop_bitmask(stop_ids: Sequence[int], words: int) -> torch.Tensor:
    """An int32 bitmask (words,) with the bits of ``stop_ids`` set (bit 31 is the sign bit)."""
    out = torch.zeros(words, dtype=torch.int32)
    for t in stop_ids:
        w, b = divmod(int(t), 32)
        if w < words:
            out[w] |= -(1 << 31) if b == 31 else 1 << b
    return out
