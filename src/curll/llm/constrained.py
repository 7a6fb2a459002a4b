"""Schema-constrained, per-request reproducible sampling for ``transformers`` ``generate()``.

:class:`ConstrainedSampler` is a ``LogitsProcessor`` used with greedy decoding
(``do_sample=False``). At every step, for each row ``b`` of the batch it:

1. advances row b's xgrammar matcher with the token just chosen, and masks every token
   the row's JSON-schema grammar forbids (rows without a schema are not masked);
2. applies the row's own temperature and top-p;
3. adds Gumbel noise drawn from the row's own ``torch.Generator``.

The argmax of ``logits / T + Gumbel`` is an exact sample from ``softmax(logits / T)``
(the Gumbel-max trick). Because the noise comes from a generator seeded per request, a
request's answer does not depend on which other requests share its batch: a run resumed
after a crash, whose batches differ, gives the same text. Temperature 0 is plain greedy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class RowSpec:
    """How to sample one row: its compiled grammar (or None), seed, temperature and top-p."""

    grammar: Any | None
    seed: int
    temperature: float
    top_p: float


class ConstrainedSampler:
    """A ``transformers`` logits processor; use a new one for every ``generate()`` call."""

    def __init__(self, rows: Sequence[RowSpec], vocab_size: int) -> None:
        import xgrammar as xgr

        self._xgr = xgr
        self.rows = list(rows)
        self.vocab_size = vocab_size
        self.matchers = [None if r.grammar is None else xgr.GrammarMatcher(r.grammar) for r in rows]
        self.generators = [torch.Generator().manual_seed(r.seed) for r in rows]
        self.bitmask = xgr.allocate_token_bitmask(len(rows), vocab_size)
        self._started = False

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        # input_ids: (B, T) tokens so far; scores: (B, V') next-token logits, V' >= tokenizer size
        if self._started:
            last = input_ids[:, -1].tolist()
            for m, tok in zip(self.matchers, last, strict=True):
                # a finished row receives pad tokens: its matcher has already terminated
                if m is not None and not m.is_terminated() and not m.accept_token(tok):
                    raise RuntimeError(f"grammar rejected token {tok} it allowed one step before")
        self._started = True
        scores = scores.float()
        if any(m is not None for m in self.matchers):
            self._xgr.reset_token_bitmask(self.bitmask)
            for b, m in enumerate(self.matchers):
                if m is not None and not m.is_terminated():
                    m.fill_next_token_bitmask(self.bitmask, b)
            device = scores.device
            scores = scores.cpu()
            self._xgr.apply_token_bitmask_inplace(scores, self.bitmask, vocab_size=self.vocab_size)
            scores = scores.to(device)
        out = torch.empty_like(scores)
        for b, row in enumerate(self.rows):
            out[b] = self._sample_scores(scores[b], row, self.generators[b])
        return out

    @staticmethod
    def _sample_scores(logits: torch.Tensor, row: RowSpec, gen: torch.Generator) -> torch.Tensor:
        """Scores whose argmax is a sample from the row's tempered, nucleus-filtered distribution."""
        if row.temperature == 0:
            return logits  # greedy
        z = logits / row.temperature
        if row.top_p < 1.0:
            probs = torch.softmax(z, dim=-1)
            sorted_p, order = probs.sort(descending=True)
            # drop a token when the mass before it already reaches top_p (the first always stays)
            drop_sorted = (sorted_p.cumsum(-1) - sorted_p) >= row.top_p
            z = z.masked_fill(torch.zeros_like(drop_sorted).scatter(0, order, drop_sorted), float("-inf"))
        u = torch.rand(z.shape, generator=gen).clamp_(1e-10, 1.0 - 1e-7).to(z.device)
        return z - torch.log(-torch.log(u))
