"""95% intervals and p-values of matrix cells, CL metrics and paired differences: the bootstrap
over test items and training seeds, paired across models, vectorised over replicates.

A replicate draws, within each (stage, type) stratum of the test items, as many items as the
stratum has, with replacement; an item's weight is how often it was drawn. Every model is
scored on the same draw (all models answer the same items, so a difference between two models
keeps its pairing), and everything is recomputed from the weighted rows. With several training
seeds, a replicate also draws as many seeds as were trained, with replacement
(:func:`seed_weights`), the same draw for every order, and a row's weight is its item's count
times its seed's count (the two-way bootstrap of a crossed design).

``compute(rows, W)`` gets the rows and a (rows, B) weight matrix and returns name -> (B,)
values: the point estimate is ``compute(rows, ones((rows, 1)))`` and the replicates are the
same function on the drawn weights, so both share one code path.

Small samples. The bootstrap variance of a mean of n draws is (n-1)/n times the unbiased
s^2/n, so a bootstrap from 2-5 items a stratum understates the spread by sqrt((n-1)/n); and with
few items a normal quantile understates the tails. So a value's standard error is the standard
deviation of its replicates times the inflation factor ``f = max(sqrt(n/(n-1)), sqrt(m/(m-1)))``,
n the smallest stratum (of more than one item) and m the number of seeds (when more than one):
the (n-1)/n bias undone for the stratum of the fewest items, conservative for the larger ones.
The interval is ``value +- t * se`` (the standard interval with a bootstrap standard error), t
the 1 - ALPHA/2 quantile of Student's t with ``df`` = items - strata degrees of freedom, or m - 1 when
there are m > 1 seeds and that is fewer (the seeds' share of the spread has only m - 1): the
items and strata a value rests on, so a matrix cell counts its own stage's items of its kind
(:func:`cell_df`), a CL metric every item; and
the two-sided p-value of "the value is 0" is ``2 * P(T_df > |value| / se)``: the interval
leaves out 0 exactly when p < :data:`ALPHA` (0.05, so the interval is a 95% one).
A value that no replicate moves gets no interval and no p-value; nor does one that no redraw
of the items moves (all its strata hold one item, or its items agree: replicates that differ by
round-off alone, :data:`ROUND_OFF`, do not move it), though the seeds' draw
moves it: the seeds' spread alone leaves out the items', which one item per stratum cannot
estimate. Nor does a value that some replicate leaves undefined (a model missing for one seed:
the replicates without it would estimate another quantity).

Bounded values. A value that can only lie within known bounds (a judge cell within the rating
scale, a difference of two within plus or minus its width: ``ranges``, e.g.
:func:`curll.evaluate.values.judge_ranges`) gets its interval clipped to them: the true value
lies within them, so the clipped interval covers it whenever the full one does, and with few
items the full one reaches past the scale (t with 1 degree of freedom is 12.7). The p-value
is the full interval's, and as 0 lies within a difference's bounds, a clipped interval leaves
out 0 exactly when the full one does (a level's bounds, 1-5 say, leave out 0 anyway; no claim
tests a level against 0). Rows off the scale the bounds were made for (scores the
stage's schema would refuse) could put a value past its bounds: the interval is then never
clipped past the value itself.

:func:`holm` adjusts a family of p-values for the number of claims.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from curll.errors import CurllError

#: the level every test of the evaluation is made at (the gate's, the claims' after Holm, the
#: judge's controls'), and the intervals' 1 - ALPHA coverage
ALPHA = 0.05

#: rows and their (rows, B) weights -> name -> (B,) values (NaN where undefined)
Compute = Callable[[pd.DataFrame, np.ndarray], Mapping[str, np.ndarray]]
#: a value's name -> the (low, high) bounds it lies within, or None where it has none
Ranges = Callable[[str], "tuple[float, float] | None"]


@dataclass(frozen=True)
class Interval:
    """A value from all rows, the bounds of its 95% interval and the p-value of "it is 0"
    (None when some replicate leaves it undefined, when no replicate moves it, or when no
    redraw of the items alone moves it: see the module docstring)."""

    value: float | None
    lo: float | None
    hi: float | None
    p: float | None = None


def item_weights(items: pd.DataFrame, samples: int, seed: int) -> pd.DataFrame:
    """``items`` (``item_id``, ``stage``, ``type``; one row per item) -> a frame indexed by
    item_id with one column per replicate: how often the item was drawn (int)."""
    rng = np.random.default_rng(seed)
    ids = items["item_id"].to_numpy()
    counts = np.zeros((len(items), samples), dtype=np.int64)
    cols = np.arange(samples)[None, :]
    for _, idx in sorted(items.groupby(["stage", "type"]).indices.items()):
        draws = rng.integers(0, len(idx), size=(len(idx), samples))  # (k, B) positions in the stratum
        drawn = np.zeros((len(idx), samples), dtype=np.int64)
        np.add.at(drawn, (draws, np.broadcast_to(cols, draws.shape)), 1)
        counts[idx] = drawn
    return pd.DataFrame(counts, index=pd.Index(ids, name="item_id"))


def seed_weights(seeds: list[int], samples: int, seed: int) -> pd.DataFrame:
    """A frame indexed by training seed (name ``seed``) with one column per replicate: how often
    that seed was drawn out of ``len(seeds)`` draws with replacement (all 1 for one seed).
    Drawn from its own stream, so adding seeds leaves the item draws as they were."""
    rng = np.random.default_rng([seed, 1])
    draws = rng.integers(0, len(seeds), size=(samples, len(seeds)))
    counts = np.zeros((len(seeds), samples), dtype=np.int64)
    np.add.at(counts, (draws.T, np.broadcast_to(np.arange(samples)[None, :], draws.T.shape)), 1)
    return pd.DataFrame(counts, index=pd.Index(seeds, name="seed"))


def missing_seeds(rows: pd.DataFrame) -> list[str]:
    """``<order> trained to <stage>: seeds [...] of [...]`` for each model (``order``,
    ``trained_to``) of ``rows`` that lacks some training seed of ``rows`` (``seed``): the seed
    draw pairs models by seed, so it needs every model for every seed."""
    every = seeds_of(rows)
    have: dict[tuple[str, int], set[int]] = {}
    for order, to, seed in zip(rows["order"], rows["trained_to"], rows["seed"], strict=True):
        have.setdefault((str(order), int(to)), set()).add(int(seed))
    return [f"{order} trained to {to}: seeds {sorted(seeds)} of {every}"
            for (order, to), seeds in sorted(have.items()) if sorted(seeds) != every]  # fmt: skip


def single_item_strata(items: pd.DataFrame) -> list[str]:
    """``stage/type`` of the strata of ``items`` (``stage``, ``type``, one row per item) with one item."""
    sizes = Counter(f"{s}/{t}" for s, t in zip(items["stage"], items["type"], strict=True))
    return sorted(k for k, n in sizes.items() if n == 1)


def inflation(items: pd.DataFrame, seeds: int) -> float:
    """The small-sample factor of the module docstring: sqrt(n/(n-1)) for the smallest stratum of
    ``items`` with n > 1, sqrt(m/(m-1)) for m = ``seeds`` > 1, the larger of the two (1 if none)."""
    sizes = [n for n in Counter(zip(items["stage"], items["type"], strict=True)).values() if n > 1]
    factors = [1.0] + ([math.sqrt(min(sizes) / (min(sizes) - 1))] if sizes else [])
    return max([*factors, math.sqrt(seeds / (seeds - 1))] if seeds > 1 else factors)


def bootstrap(
    rows: pd.DataFrame, weights: Mapping[str, pd.DataFrame], compute: Compute, *, inflate: float = 1.0,
    df: float | Callable[[str], float] | None = None, chunk: int = 250, items: str | None = None,
    ranges: Ranges | None = None,
) -> dict[str, Interval]:  # fmt: skip
    """``compute`` on ``rows`` with unit weights (the values), then on the replicates, ``chunk``
    at a time (memory: rows x chunk): a row's weight is the product over ``weights`` (column of
    ``rows`` -> its replicate weights, e.g. ``item_id`` -> :func:`item_weights`, ``seed`` ->
    :func:`seed_weights`) of the weight of the row's value. ``inflate`` and ``df``: the factor
    and degrees of freedom of the module docstring (``df`` None: the normal quantile).
    ``items``: the column of ``weights`` that draws the test items; a value that
    :data:`ITEM_CHECK` replicates drawing the items alone (the other weights at 1) leave as it
    is gets no interval, whatever the other draws do (the seeds' spread alone is not its
    uncertainty). A value some replicate leaves undefined gets none either (those replicates
    would estimate another quantity). ``ranges``: each value's bounds, which its interval is
    clipped to (the module docstring)."""
    point = {k: float(v[0]) for k, v in compute(rows, np.ones((len(rows), 1))).items()}
    names = list(point)
    samples = next(iter(weights.values())).shape[1]
    reps = np.full((samples, len(names)), np.nan)
    for start in range(0, samples, chunk):
        got = compute(rows, _weights(rows, weights, start, min(chunk, samples - start)))
        reps[start : start + min(chunk, samples - start)] = _stacked(got, names)
    if items is not None and len(weights) > 1 and samples:
        alone = compute(rows, _weights(rows, {items: weights[items]}, 0, min(ITEM_CHECK, samples)))
        for k, col in enumerate(_stacked(alone, names).T):
            if _unmoved(col):  # no item draw moves it: as if no replicate did
                reps[:, k] = point[names[k]]
    from scipy import stats  # type: ignore[import-untyped]

    dists: dict[float | None, Any] = {}  # degrees of freedom -> (distribution, its 97.5% quantile)

    def dist_of(name: str) -> Any:
        d = df(name) if callable(df) else df
        if d not in dists:
            dist = stats.norm() if d is None else stats.t(df=max(1.0, d))
            dists[d] = (dist, float(dist.ppf(1 - ALPHA / 2)))
        return dists[d]

    return {name: _interval(point[name], reps[:, k], inflate, *dist_of(name),
                            bounds=ranges(name) if ranges else None)
            for k, name in enumerate(names)}  # fmt: skip


#: replicates that draw the items alone, to find the values no item draw moves
ITEM_CHECK = 64


def _weights(rows: pd.DataFrame, weights: Mapping[str, pd.DataFrame], start: int, count: int) -> np.ndarray:
    """(rows, count) weights of replicates ``start`` .. ``start + count``: the product of each
    row's value's weight under every entry of ``weights`` (a value unknown to them: 0)."""
    at = np.ones((len(rows), count))
    for column, w in weights.items():
        part = w.iloc[:, start : start + count]
        at = at * np.nan_to_num(part.reindex(rows[column].to_numpy()).to_numpy(dtype=float))
    return at


def _stacked(got: Mapping[str, np.ndarray], names: list[str]) -> np.ndarray:
    return np.stack([np.asarray(got[n], dtype=float) for n in names], axis=1)


#: replicates that differ by no more than this share of their size (at least 1) differ by the
#: round-off of their weighted sums alone: the same ratio summed in another order
ROUND_OFF = 1e-9


def _unmoved(col: np.ndarray) -> bool:
    """No replicate of ``col`` moves the value beyond :data:`ROUND_OFF` (or fewer than two are
    defined): items that all agree give replicates that differ in the last bits only."""
    defined = col[~np.isnan(col)]
    if len(defined) < 2:
        return True
    scale = max(1.0, float(np.max(np.abs(defined))))
    return bool(np.ptp(defined) <= ROUND_OFF * scale)


def _interval(
    value: float, reps: np.ndarray, inflate: float, dist: Any, quantile: float, *,
    bounds: tuple[float, float] | None,
) -> Interval:  # fmt: skip
    if math.isnan(value):
        return Interval(None, None, None)
    if np.isnan(reps).any() or _unmoved(reps):  # undefined in some replicate, or no spread
        return Interval(_r(value), None, None)
    se = inflate * float(np.std(reps, ddof=1))
    p = float(2 * dist.sf(abs(value) / se)) if se > 0 else (1.0 if value == 0 else 0.0)
    lo, hi = value - quantile * se, value + quantile * se
    if bounds is not None:  # the true value lies within them (the module docstring); never past
        lo, hi = max(lo, min(bounds[0], value)), min(hi, max(bounds[1], value))  # the value itself
    return Interval(_r(value), _r(lo), _r(hi), min(1.0, p))


def degrees_of_freedom(items: pd.DataFrame, seeds: int = 1) -> int:
    """Items minus strata (``stage``, ``type``) of ``items`` (one row per item), and at most
    ``seeds`` - 1 when more than one seed was resampled; at least 1."""
    strata = len(set(zip(items["stage"], items["type"], strict=True)))
    df = len(items) - strata
    return max(1, min(df, seeds - 1) if seeds > 1 else df)


def crossed(
    rows: pd.DataFrame, item: str, samples: int, seed: int, compute: Compute, ranges: Ranges | None = None
) -> dict[str, Interval]:
    """Bootstrap intervals of ``compute`` over the ``item`` column of ``rows`` (strata: ``stage``
    and ``type``) crossed with its training seeds (``seed``), with the small-sample inflation and
    degrees of freedom of :func:`small_sample`, clipped to ``ranges``; none when ``samples`` is 0.
    A CurllError naming ``evaluate.bootstrap.samples`` when a model (``order``, ``trained_to``)
    lacks a seed the others have (:func:`missing_seeds`)."""
    if not samples:
        return {}
    if lacking := missing_seeds(rows):
        raise CurllError(f"{len(lacking)} model(s) lack a training seed the others have ("
                         + "; ".join(lacking[:3]) + "): the bootstrap draws seeds for every model alike; "
                         "give every model every seed, or set evaluate.bootstrap.samples: 0",
                         field="evaluate.bootstrap.samples")  # fmt: skip
    keys = rows[[item, "stage", "type"]].drop_duplicates(item).rename(columns={item: "item_id"})
    weights = {item: item_weights(keys, samples, seed), "seed": seed_weights(seeds_of(rows), samples, seed)}
    small = small_sample(rows, item)
    return bootstrap(rows, weights, compute, inflate=small["factor"], df=cell_df(keys, len(weights["seed"]),
                     small["df"]), items=item, ranges=ranges)  # fmt: skip


#: the kinds of a cell that pools every type of its stage
POOLED = ("sum", "all")


def cell_df(items: pd.DataFrame, seeds: int, family: float) -> Callable[[str], float]:
    """A value's degrees of freedom by its name: a cell (``<family>/<order>/<kind>/<trained_to>/
    <stage>``, e.g. ``cell/...``, ``gain/...``, ``paired/...``) rests on its own stage's items of
    its kind (every type for a pooled kind, :data:`POOLED`), so its df is
    :func:`degrees_of_freedom` of those items alone; any other value gets ``family``'s."""
    cache: dict[tuple[int, str], float] = {}

    def df(name: str) -> float:
        parts = name.split("/")
        if len(parts) != 5 or not parts[4].isdigit():
            return family
        stage, kind = int(parts[4]), parts[2]
        if (stage, kind) not in cache:
            mine = items[(items["stage"] == stage) & ((items["type"] == kind) | (kind in POOLED))]
            cache[(stage, kind)] = float(degrees_of_freedom(mine, seeds)) if len(mine) else family
        return cache[(stage, kind)]

    return df


def small_sample(rows: pd.DataFrame, item: str) -> dict[str, float]:
    """The small-sample factor (:func:`inflation`) and the t degrees of freedom
    (:func:`degrees_of_freedom`) of ``rows``' items and seeds."""
    keys = rows[[item, "stage", "type"]].drop_duplicates(item)
    m = len(seeds_of(rows))
    return {"factor": round(inflation(keys, m), 6), "df": degrees_of_freedom(keys, m)}


def seeds_of(rows: pd.DataFrame) -> list[int]:
    """The training seeds of ``rows`` (``seed``), sorted."""
    return sorted(int(s) for s in rows["seed"].unique())


def single_strata_of(rows: pd.DataFrame, item: str) -> list[str]:
    """:func:`single_item_strata` of the items (column ``item``) of ``rows``."""
    return single_item_strata(rows[[item, "stage", "type"]].drop_duplicates(item))


def holm(p: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjustment of a family of p-values (Holm 1979): with the m p-values
    sorted p_(1) <= ... <= p_(m), p_adj_(i) = max over j <= i of min(1, (m - j + 1) p_(j)).
    A claim holds at level a when its adjusted p is below a (family-wise error <= a). Unrounded."""
    order = sorted(p, key=lambda k: (p[k], k))
    out, running = {}, 0.0
    for j, name in enumerate(order):
        running = max(running, min(1.0, (len(order) - j) * p[name]))
        out[name] = running
    return out


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 6)
