"""Diversity of a text collection as 1 / gzip compression ratio (paper Appendix B.1).

``diversity(texts) = compressed bytes / original bytes`` of the texts joined by newlines
(UTF-8, gzip level 9, fixed mtime so the figure is reproducible). Higher is more diverse;
an empty collection has diversity 0.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence

import numpy as np


def diversity(texts: Sequence[str]) -> float:
    raw = "\n".join(texts).encode("utf-8")
    if not raw:
        return 0.0
    return len(gzip.compress(raw, compresslevel=9, mtime=0)) / len(raw)


def sample_indices(n: int, size: int, seed: int) -> np.ndarray:
    """Sorted positions of a seeded sample of ``min(size, n)`` out of ``n`` (all when n <= size)."""
    if n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=size, replace=False))
