"""95% intervals of matrix cells and CL metrics: the bootstrap over test items and training seeds,
paired across models.

A replicate draws, within each (stage, type) stratum of the test items, as many items as the
stratum has, with replacement; an item's weight is how often it was drawn. Every model is
scored on the same draw (all models answer the same items, so a difference between two models
keeps its pairing), and everything is recomputed from the weighted rows: each cell is the
weighted mean of its items (column ``w``, read by :func:`curll.evaluate.analysis.matrix` and
:func:`curll.evaluate.loss.loss_matrix`), then every metric from those cells. The interval of a
value is the 2.5th and 97.5th percentiles of its replicates (replicates where it is undefined
left out). Seeded: the same rows, samples and seed give the same intervals. A value that no
replicate moves (all its strata hold one item: a draw of one from one is that one) gets no
interval, not one of width 0; a value resting partly on one-item strata gets an interval that
understates its uncertainty there (:func:`single_item_strata` lists them, the report says so).

Items are a unit of resampling because they are a unit of sampling: another run of the
pipeline would draw other test items for each indicator. Training seeds are the other: with
several, a replicate also draws as many seeds as were trained, with replacement
(:func:`seed_weights`), the same draw for every order (seed s of every order shares its data
order and initial weights), and a row's weight is its item's count times its seed's count (the
two-way bootstrap of a crossed design). With one seed nothing is drawn for it, and the
interval says nothing about a retrained model. With ``samples`` 0 no interval is made.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: a flat view of what is computed from the rows: name -> value (None where undefined)
Values = Mapping[str, float | None]


@dataclass(frozen=True)
class Interval:
    """A value from all rows, and the bounds of its 95% bootstrap interval (None when fewer than
    two replicates define it)."""

    value: float | None
    lo: float | None
    hi: float | None


def item_weights(items: pd.DataFrame, samples: int, seed: int) -> pd.DataFrame:
    """``items`` (``item_id``, ``stage``, ``type``; one row per item) -> a frame indexed by
    item_id with one column per replicate: how often the item was drawn (int)."""
    rng = np.random.default_rng(seed)
    ids = items["item_id"].to_numpy()
    counts = np.zeros((len(items), samples), dtype=np.int64)
    for _, idx in sorted(items.groupby(["stage", "type"]).indices.items()):
        draws = rng.integers(0, len(idx), size=(len(idx), samples))  # (k, B) positions in the stratum
        for b in range(samples):
            counts[idx, b] = np.bincount(draws[:, b], minlength=len(idx))
    return pd.DataFrame(counts, index=pd.Index(ids, name="item_id"))


def seed_weights(seeds: list[int], samples: int, seed: int) -> pd.DataFrame:
    """A frame indexed by training seed (name ``seed``) with one column per replicate: how often
    that seed was drawn out of ``len(seeds)`` draws with replacement (all 1 for one seed).
    Drawn from its own stream, so adding seeds leaves the item draws of :func:`item_weights` as
    they were."""
    rng = np.random.default_rng([seed, 1])
    draws = rng.integers(0, len(seeds), size=(samples, len(seeds)))
    counts = np.stack([np.bincount(d, minlength=len(seeds)) for d in draws], axis=1) if samples else (
        np.zeros((len(seeds), 0), dtype=np.int64))  # fmt: skip
    return pd.DataFrame(counts, index=pd.Index(seeds, name="seed"))


def single_item_strata(items: pd.DataFrame) -> list[str]:
    """``stage/type`` of the strata of ``items`` (``stage``, ``type``, one row per item) with one item."""
    sizes = Counter(f"{s}/{t}" for s, t in zip(items["stage"], items["type"], strict=True))
    return sorted(k for k, n in sizes.items() if n == 1)


def bootstrap(
    rows: pd.DataFrame, weights: Mapping[str, pd.DataFrame], compute: Callable[[pd.DataFrame], Values]
) -> dict[str, Interval]:
    """``compute`` on ``rows`` as they are, then on each replicate: ``rows`` with a column ``w``,
    the product over ``weights`` (column of ``rows`` -> its replicate weights, e.g. ``item_id``
    -> :func:`item_weights`, ``seed`` -> :func:`seed_weights`) of the weight of the row's value;
    and each value's interval over the replicates."""
    point = compute(rows)
    names = list(point)
    samples = next(iter(weights.values())).shape[1]
    reps = np.full((samples, len(names)), np.nan)
    at = np.ones((len(rows), samples))
    for column, w in weights.items():  # (rows, B); a value unknown to its weights: NaN, then 0
        at = at * w.reindex(rows[column].to_numpy()).to_numpy(dtype=float)
    for b in range(samples):
        got = compute(rows.assign(w=np.nan_to_num(at[:, b])))
        reps[b] = [np.nan if got.get(n) is None else float(got[n]) for n in names]  # type: ignore[arg-type]
    out = {}
    for k, name in enumerate(names):
        col = reps[:, k][~np.isnan(reps[:, k])]
        lo, hi = (
            (None, None)
            if len(col) < 2
            else (float(np.percentile(col, 2.5)), float(np.percentile(col, 97.5)))
        )
        if lo is not None and lo == hi:  # no replicate moved it (one-item strata, or equal items): no spread
            lo = hi = None
        out[name] = Interval(point[name], _r(lo), _r(hi))
    return out


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 6)
