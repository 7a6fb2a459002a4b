"""Seeded draws that depend on the ids drawn, never on the order of the rows.

:func:`seeded_key` orders ids for a seed: ``sha256(f"{seed}:{id}")`` in hex. :func:`bottom_k`
keeps, in each group, the ``k`` rows of smallest key (a bottom-k sample: for a hash that behaves
as random, every subset of ``k`` is equally likely). Hence:

- the same ids give the same draw in any row order, on any machine;
- adding one id to a group changes at most one pick (the new id, if its key is among the ``k``
  smallest, replaces the largest);
- another seed draws independently.

Used where a sample is of ids that tables carry: taxonomy's ``per_stage``, split's tie breaks
and the units it rates, the imported units' ranks and the evaluate items' ``max_per_type``.
Samples of positions in a list the stage has just ordered (vocab's words per stage, the seeds'
words, the diversity sample, replay, the judge's control items, the release draw) use numpy's
``default_rng`` seeded with the run's seed and the group, over that fixed order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pandas as pd


def seeded_key(seed: int, key: str) -> str:
    """The sort key of ``key`` under ``seed`` (64 hex digits)."""
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def bottom_k(frame: pd.DataFrame, k: int, seed: int, *, key: str, by: Sequence[str]) -> pd.Series:
    """A boolean mask over ``frame``'s rows: in each group of ``by``, the ``k`` rows whose
    ``key`` column has the smallest :func:`seeded_key` (all of a group of ``k`` or fewer).
    Rows sharing a key value are told apart by their position."""
    order = pd.Series([seeded_key(seed, str(v)) for v in frame[key]], index=frame.index, dtype=object)
    rank = order.groupby([frame[c] for c in by]).rank(method="first")
    return pd.Series(rank.to_numpy(dtype=float) <= k, index=frame.index)
