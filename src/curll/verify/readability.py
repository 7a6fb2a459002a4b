"""Readability grades with textstat, computed in worker processes (paper Appendix B.3).

:data:`METRICS` names the six scores of the paper's Table 5. :func:`score` returns an
``(n, 6)`` float array in that column order; with ``workers > 1`` the texts are cut into
contiguous chunks scored by a process pool, so the values are identical to one process
(each text is scored on its own; textstat is deterministic). :func:`summarise` gives the
mean and (population) standard deviation per metric.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor

import numpy as np

METRICS = (
    "flesch_kincaid",
    "smog",
    "coleman_liau",
    "automated_readability",
    "dale_chall",
    "gunning_fog",
)


def _functions() -> list[Callable[[str], float]]:
    import textstat

    return [
        textstat.flesch_kincaid_grade,
        textstat.smog_index,
        textstat.coleman_liau_index,
        textstat.automated_readability_index,
        textstat.dale_chall_readability_score,
        textstat.gunning_fog,
    ]


def _score_chunk(texts: Sequence[str]) -> np.ndarray:
    fns = _functions()
    out = np.zeros((len(texts), len(fns)), dtype=np.float64)
    for i, text in enumerate(texts):
        if text.strip():
            out[i] = [float(f(text)) for f in fns]
    return out


def score(texts: Sequence[str], *, workers: int = 1, chunk: int = 512) -> np.ndarray:
    """Scores of every text (a blank text scores 0 on every metric)."""
    texts = list(texts)
    if workers <= 1 or len(texts) <= chunk:
        return _score_chunk(texts)
    parts = [texts[i : i + chunk] for i in range(0, len(texts), chunk)]
    # fork where available: a spawned worker would re-import pandas/pandera (seconds) before
    # its first text; the workers only run pure-Python textstat, so no thread state matters
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        return np.concatenate(list(pool.map(_score_chunk, parts)))


def summarise(scores: np.ndarray) -> dict[str, dict[str, float]]:
    """{metric: {"mean", "std"}} over the rows of ``scores`` (empty input gives zeros)."""
    if not len(scores):
        return {m: {"mean": 0.0, "std": 0.0} for m in METRICS}
    return {
        m: {"mean": round(float(scores[:, j].mean()), 4), "std": round(float(scores[:, j].std()), 4)}
        for j, m in enumerate(METRICS)
    }
