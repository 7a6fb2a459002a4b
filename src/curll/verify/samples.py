"""Seeded samples of the kept texts, taken as the kept rows stream by, and what is measured on
them: diversity (1 / gzip ratio, paper Appendix B.1) and readability (Appendix B.3).

:class:`Sample` picks, per stage, the positions :func:`curll.verify.diversity.sample_indices`
draws from that stage's kept count (known after the first pass), so the sample is the same
as drawing from the whole kept table; memory holds the sampled texts only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from itertools import combinations
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from curll.config.verify import VerifyParams
from curll.verify.diversity import diversity, sample_indices
from curll.verify.readability import score, summarise


class Sample:
    """``size`` texts per stage (all when fewer are kept); ``kept``: kept rows per stage."""

    def __init__(self, kept: Mapping[int, int], size: int, seed: int) -> None:
        self._want = {s: set(sample_indices(n, size, seed + s).tolist()) for s, n in kept.items()}
        self._seen: Counter[int] = Counter()
        self.texts: dict[int, list[str]] = {s: [] for s in sorted(kept)}

    def add(self, stages: np.ndarray, texts: list[str]) -> None:
        """The next kept rows, in table order."""
        for stage, text in zip(stages.tolist(), texts, strict=True):
            if self._seen[stage] in self._want[stage]:
                self.texts[stage].append(text)
            self._seen[stage] += 1


class Measures:
    """The diversity and readability samples of one type, and their figures."""

    def __init__(self, kept: Mapping[int, int], p: VerifyParams) -> None:
        self.p = p
        kept = {s: n for s, n in kept.items() if n > 0}  # a stage that keeps nothing is not measured
        self.diversity = Sample(kept, p.diversity.sample, p.diversity.seed)
        self.readability = Sample(kept, p.readability.sample, p.readability.seed)

    def add(self, stages: np.ndarray, texts: list[str]) -> None:
        self.diversity.add(stages, texts)
        self.readability.add(stages, texts)

    def result(self, kind: str) -> dict[str, Any]:
        """{"diversity": {stage: d}, "diversity_pairs": {"i-j": d}, "readability": {stage: grades}}."""
        sample = self.diversity.texts
        stages = sorted(sample)
        grades = {
            str(s): summarise(score(self.readability.texts[s], workers=self.p.readability.workers))
            for s in tqdm(stages, desc=f"verify: readability {kind}")
        }
        return {
            "diversity": {str(s): round(diversity(t), 6) for s, t in sample.items()},
            "diversity_pairs": {
                f"{a}-{b}": round(diversity(sample[a] + sample[b]), 6) for a, b in combinations(stages, 2)
            },
            "readability": grades,
        }
