"""Bands -> stages, ordering and the per-stage cap.

Contract of :func:`assign_stages` (output follows :class:`curll.schemas.WordSchema`):
- ``bands="exclusive"`` (the paper): a word sits in exactly its band's stage.
  ``bands="cumulative"``: stage k holds every word whose band is <= k.
- Within a stage words are sorted by ``perc_known`` descending (unknown last), ties
  broken by word then pos, so the order never depends on input order.
- A stage with more than ``max_per_stage`` words (0 = no cap) keeps a uniform random
  sample of that size drawn with ``numpy.random.default_rng([seed, stage])``; the
  sample keeps the sorted order. The same inputs and seed give the same table, and
  one stage's sample does not change when other stages are added.
- ``rank`` is the 0-based position within the stage after the cap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from curll.vocab.sources import Candidate

BandMode = Literal["exclusive", "cumulative"]
_COLUMNS = {
    "word": "str",
    "pos": "str",
    "aoa": "float64",
    "perc_known": "float64",
    "stage": "int64",
    "rank": "int64",
}


def _sort_key(c: Candidate) -> tuple[float, str, str]:
    return (-(c.perc_known if c.perc_known is not None else -1.0), c.word, c.pos)


def assign_stages(
    candidates: Sequence[Candidate],
    stages: Iterable[int],
    *,
    bands: BandMode = "exclusive",
    max_per_stage: int = 0,
    seed: int = 0,
) -> pd.DataFrame:
    """Build the words table for ``stages`` from banded candidates (see module docstring)."""
    rows: list[dict[str, object]] = []
    for stage in sorted(set(stages)):
        if bands == "exclusive":
            members = [c for c in candidates if c.band == stage]
        else:
            members = [c for c in candidates if c.band <= stage]
        members.sort(key=_sort_key)
        if 0 < max_per_stage < len(members):
            rng = np.random.default_rng([seed, stage])
            keep = np.sort(rng.choice(len(members), size=max_per_stage, replace=False))
            members = [members[i] for i in keep]
        rows.extend(
            {
                "word": c.word,
                "pos": c.pos,
                "aoa": c.aoa,
                "perc_known": c.perc_known,
                "stage": stage,
                "rank": rank,
            }
            for rank, c in enumerate(members)
        )
    return pd.DataFrame(rows, columns=list(_COLUMNS)).astype(_COLUMNS)


def vocab_stats(df: pd.DataFrame, stages: Iterable[int]) -> dict[str, dict[str, dict[str, int]]]:
    """``{"stages": {"0": {"words": n}, ...}}``, listing every requested stage (0 when empty)."""
    counts = df.groupby("stage").size()
    return {"stages": {str(s): {"words": int(counts.get(s, 0))} for s in sorted(set(stages))}}
