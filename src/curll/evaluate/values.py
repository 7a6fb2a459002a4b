"""Every number the report tests, from weighted rows, for all bootstrap replicates at once.

The :data:`curll.evaluate.intervals.Compute` functions of the two families. Each takes the rows
and a (rows, B) weight matrix and returns a flat name -> (B,) mapping:

- ``cell/<order>/<kind>/<trained_to>/<stage>``: a matrix cell (the untrained model's row is
  ``trained_to`` -1), the layout of :func:`curll.evaluate.analysis.matrix` and
  :func:`curll.evaluate.loss.loss_matrix`;
- ``<order>/<kind>/<metric>``: the CL metrics at the last trained stage
  (:func:`curll.evaluate.cl.cl_batch`; FGT and BWT only for sequential orders);
- ``diff/<a>-<b>/<kind>/<metric>``: a paired difference between two orders' final metric,
  computed on the same replicate;
- loss only: ``unigram/...`` and ``gain/...`` cells (the unigram baseline's NLL, and the
  baseline's NLL minus the model's: positive = the model beats the baseline), and per order
  ``gain_own``: the mean gain on each model's own stage (the diagonal: model trained up to k
  on stage k).

A cell is a weighted ratio, sum(w * num) / sum(w * den) over its rows: judge scores over the
scored answers (a ``sum`` cell adds the cells of the types scored, NaN unless each has one), NLL
over answer tokens (pooled over types for ``all``). Loss metrics are computed on -NLL so their
signs read as for scores (:data:`curll.evaluate.cl.LOSS_NAMES`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import sparse  # type: ignore[import-untyped]

from curll import orders as order_specs
from curll.evaluate.analysis import present_models
from curll.evaluate.cl import LOSS_NAMES, METRICS, cl_batch, nanmean
from curll.evaluate.intervals import Ranges
from curll.schemas.evaluate import UNTRAINED, ScoreSchema

Grid = dict[str, np.ndarray]  # order -> (B, trained, tested) cell values


def _cells(
    rows: pd.DataFrame, w: np.ndarray, num: np.ndarray, den: np.ndarray
) -> dict[tuple[str, int, int], np.ndarray]:
    """(order, trained_to, stage) -> (B,) weighted ratio of ``num`` over ``den`` (NaN: no weight)."""
    if not len(rows):
        return {}
    keys = pd.MultiIndex.from_arrays([rows["order"], rows["trained_to"], rows["stage"]])
    codes, uniq = pd.factorize(keys)
    group = sparse.csr_matrix(
        (np.ones(len(rows)), (codes, np.arange(len(rows)))), shape=(len(uniq), len(rows))
    )
    top, bottom = group @ (num[:, None] * w), group @ (den[:, None] * w)
    ratio = np.divide(top, bottom, out=np.full_like(top, np.nan), where=bottom > 0)
    return {(str(o), int(t), int(s)): ratio[k] for k, (o, t, s) in enumerate(uniq)}


def _grid(
    cells: dict[tuple[str, int, int], np.ndarray], trained: dict[str, list[int]], tested: list[int], b: int
) -> Grid:
    out = {}
    for order, rows in trained.items():
        g = np.full((b, len(rows), len(tested)), np.nan)
        for r, t in enumerate(rows):
            for c, s in enumerate(tested):
                if (order, t, s) in cells:
                    g[:, r, c] = cells[(order, t, s)]
        out[order] = g
    return out


def _square(g: np.ndarray, trained: Sequence[int], tested: Sequence[int]) -> np.ndarray:
    """(B, n, n): the test columns of the trained stages, by label (NaN: not tested)."""
    out = np.full((g.shape[0], len(trained), len(trained)), np.nan)
    for c, s in enumerate(trained):
        if s in tested:
            out[:, :, c] = g[:, :, list(tested).index(s)]
    return out


def _metrics(
    grid: Grid, trained: dict[str, list[int]], tested: list[int], kind: str, names: dict[str, str]
) -> dict[str, np.ndarray]:
    """``<order>/<kind>/<name>`` of each trained order's final CL metrics (``names``: metric ->
    its published name), from ``grid`` (higher is better)."""
    out: dict[str, np.ndarray] = {}
    squares = {o: _square(grid[o], trained[o], tested) for o in trained if o != UNTRAINED}
    ref = order_specs.reference()
    for order, m in squares.items():
        stages = trained[order]
        ind_diag = _diagonal(grid[ref], trained[ref], tested, stages) if (
            ref is not None and order != ref and ref in grid) else None  # fmt: skip
        base = _diagonal(grid[UNTRAINED], None, tested, stages) if UNTRAINED in grid else None
        got = cl_batch(m, len(stages) - 1, ind_diag=ind_diag, base=base)
        for metric, v in got.items():
            if METRICS[metric].sequence and not order_specs.spec(order).sequential:
                continue
            out[f"{order}/{kind}/{names.get(metric, metric)}"] = v
    return out


def _diagonal(g: np.ndarray, rows: list[int] | None, tested: list[int], stages: list[int]) -> np.ndarray:
    """(B, len(stages)): for each stage s, the cell (s, s) of ``g`` (``rows`` its trained stages;
    None: its one row, the untrained model's, tested on s); NaN where there is none."""
    out = np.full((g.shape[0], len(stages)), np.nan)
    for k, s in enumerate(stages):
        r = 0 if rows is None else (rows.index(s) if s in rows else None)
        if r is not None and s in tested:
            out[:, k] = g[:, r, tested.index(s)]
    return out


def _cell_names(
    prefix: str, grid: Grid, trained: dict[str, list[int]], tested: list[int], kind: str
) -> dict[str, np.ndarray]:
    return {f"{prefix}/{o}/{kind}/{t}/{s}": g[:, r, c] for o, g in grid.items()
            for r, t in enumerate(trained[o]) for c, s in enumerate(tested)}  # fmt: skip


def _all_diffs(
    values: dict[str, np.ndarray], trained: dict[str, list[int]], kinds: list[str], *, loss: bool
) -> dict[str, np.ndarray]:
    """The paired differences ``diff/<a>-<b>/<kind>/<metric>`` (a's value minus b's, on the same
    replicate) of each metric tested as a difference (:attr:`curll.evaluate.cl.Metric.test`:
    AP, ``mean_nll`` on losses), for every kind and every pair of
    :func:`curll.orders.compared` whose models were trained to the same stages (``trained``:
    order -> its stages): a mean over other stages would differ by those stages' difficulty."""
    out: dict[str, np.ndarray] = {}
    pairs = [(a, b) for a, b in order_specs.compared(trained) if trained[a] == trained[b]]
    for m in METRICS.values():
        if m.test == "difference":
            metric = m.loss_name if loss else m.name
            for kind in kinds:
                for a, b in pairs:
                    x, y = values.get(f"{a}/{kind}/{metric}"), values.get(f"{b}/{kind}/{metric}")
                    if x is not None and y is not None:
                        out[f"diff/{a}-{b}/{kind}/{metric}"] = x - y
    return out


def _trained(rows: pd.DataFrame) -> dict[str, list[int]]:
    return {o: sorted(int(t) for t in rows.loc[rows["order"] == o, "trained_to"].unique())
            for o in present_models(rows)}  # fmt: skip


def loss_values(rows: pd.DataFrame, w: np.ndarray, kinds: list[str]) -> dict[str, np.ndarray]:
    """The loss family of a LossSchema table of one split (``kinds``: types and ``all``). A model
    with no scored record keeps its row of empty cells, as in :func:`curll.evaluate.loss.loss_matrix`."""
    trained, out = _trained(rows), dict[str, np.ndarray]()
    scored = rows["tokens"].to_numpy() > 0
    rows, w = rows[scored], w[scored]
    for kind in kinds:
        pick = np.ones(len(rows), bool) if kind == "all" else (rows["type"] == kind).to_numpy()
        sub, sw = rows[pick], w[pick]
        tested = sorted(int(s) for s in sub["stage"].unique())
        tokens = sub["tokens"].to_numpy(dtype=float)
        nll = _grid(_cells(sub, sw, sub["nll"].to_numpy(dtype=float), tokens), trained, tested, w.shape[1])
        uni = _grid(
            _cells(sub, sw, sub["unigram_nll"].to_numpy(dtype=float), tokens), trained, tested, w.shape[1]
        )
        gain = {o: uni[o] - nll[o] for o in nll}
        out |= _cell_names("cell", nll, trained, tested, kind) | _cell_names(
            "unigram", uni, trained, tested, kind
        )
        out |= _cell_names("gain", gain, trained, tested, kind)
        out |= _metrics({o: -g for o, g in nll.items()}, trained, tested, kind, LOSS_NAMES)
        for o in trained:
            if o == UNTRAINED:
                continue
            own = _square(gain[o], trained[o], tested)
            diag = np.arange(len(trained[o]))
            out[f"{o}/{kind}/gain_own"] = nanmean(own[:, diag, diag])
        levels = [m.loss_name for m in METRICS.values() if m.level]
        for name in (f"{o}/{kind}/{level}" for o in trained for level in levels):
            if name in out:
                out[name] = -out[name]  # a level of -NLL (AP) back to a loss
    return out | _all_diffs(out, trained, kinds, loss=True)


def judge_values(rows: pd.DataFrame, w: np.ndarray, kinds: list[str]) -> dict[str, np.ndarray]:
    """The judge family of a scores table (``kinds``: types and ``sum``)."""
    trained, out = _trained(rows), dict[str, np.ndarray]()
    types = [k for k in kinds if k != "sum"]
    grids: dict[str, Grid] = {}
    for kind in types:
        sub, sw = rows[(rows["type"] == kind).to_numpy()], w[(rows["type"] == kind).to_numpy()]
        valid = sub["score"].notna().to_numpy(dtype=float)
        tested = sorted(int(s) for s in sub["stage"].unique())
        grids[kind] = _grid(_cells(sub, sw, sub["score"].fillna(0.0).to_numpy(dtype=float), valid),
                            trained, tested, w.shape[1])  # fmt: skip
        out |= _cell_names("cell", grids[kind], trained, tested, kind)
        out |= _metrics(grids[kind], trained, tested, kind, {})
    if "sum" in kinds:  # over the types scored, as :func:`curll.evaluate.analysis.matrix` sums
        tested = sorted(int(s) for s in rows["stage"].unique())
        total = {o: np.zeros((w.shape[1], len(trained[o]), len(tested))) for o in trained}
        for kind in (k for k in types if (rows["type"] == k).any()):
            kt = sorted(int(s) for s in rows.loc[rows["type"] == kind, "stage"].unique())
            for o in trained:
                part = np.full_like(total[o], np.nan)
                for c, s in enumerate(tested):
                    if s in kt:
                        part[:, :, c] = grids[kind][o][:, :, kt.index(s)]
                total[o] = total[o] + part
        out |= _cell_names("cell", total, trained, tested, "sum")
        out |= _metrics(total, trained, tested, "sum", {})
    return out | _all_diffs(out, trained, kinds, loss=False)


def score_scale() -> tuple[float, float]:
    """(lowest, highest) judge score: the bounds the scores table's schema puts on ``score``
    (:class:`curll.schemas.evaluate.ScoreSchema`)."""
    stats = {k: v for c in ScoreSchema.to_schema().columns["score"].checks for k, v in c.statistics.items()}
    return float(stats["min_value"]), float(stats["max_value"])


def judge_ranges(rows: pd.DataFrame, kinds: list[str]) -> Ranges:
    """The bounds of each value of :func:`judge_values` (and of a ``paired/`` cell difference),
    by its name, with every score within :func:`score_scale` (low, high): a cell or AP (a mean of
    cells) of a type lies within (low, high), of ``sum`` within n times that, n the types
    ``rows`` scores (a sum cell is undefined unless every one of them has a cell); a change (FGT,
    BWT, FWT, FWT_zero_shot, a paired cell, a difference of two orders' AP) within plus or minus
    that range's width, and a difference of two orders' changes within twice that. None for a
    name of no kind of ``kinds``."""
    low, high = score_scale()
    n = sum(1 for k in kinds if k != "sum" and (rows["type"] == k).any())

    def ranges(name: str) -> tuple[float, float] | None:
        parts = name.split("/")
        if parts[0] in ("cell", "paired") and len(parts) == 5:
            kind, change = parts[2], int(parts[0] == "paired")
        elif parts[0] == "diff" and len(parts) == 4 and parts[3] in METRICS:
            kind, change = parts[2], 1 if METRICS[parts[3]].level else 2
        elif len(parts) == 3 and parts[2] in METRICS:
            kind, change = parts[1], 0 if METRICS[parts[2]].level else 1
        else:
            return None
        if kind not in kinds:
            return None
        k = n if kind == "sum" else 1
        width = change * k * (high - low)  # change: 0 a level, 1 a change of levels, 2 one of changes
        return (-width, width) if change else (k * low, k * high)

    return ranges
