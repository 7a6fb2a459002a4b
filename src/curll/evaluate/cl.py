"""Continual-learning metrics of a stage x stage score matrix, each declared
once in :data:`METRICS`.

``J`` is a DataFrame indexed by ``trained_to`` (the last stage a model was trained on, in
training order) with one column per test stage: ``J.loc[t, i]`` is the score on stage i's
test set of the model trained up to stage t. Stages are matched by label, so a run over
stages 2-4 works as well as one over 0-4; NaN (not measured) cells are left out of means.
With positions k = 0..T over the trained stages s_0 < s_1 < ... (each metric's own formula is
its :attr:`Metric.formula`):

- ``AP_t``  = mean over i <= t of J[t][i]
- ``FGT_t`` = mean over i < t of (max over j in [i, t-1] of J[j][i]  -  J[t][i])
- ``BWT_t`` = mean over i < t of (J[t][i] - J[i][i])
- ``FWT_t`` = mean over 1 <= i <= t of (J[i][i] - Jind[i][i]), Jind from independent models
- ``FWT0_t`` = mean over 1 <= i <= t of (J[i-1][i] - b_i), b from an untrained model

A series has one value per t; a value whose mean is over nothing is None (FGT, BWT and FWT
at t = 0). FGT and BWT describe a sequence of models each trained on top of the last
(:attr:`Metric.sequence`); for models trained from scratch they are not defined:
:meth:`CLMetrics.without_sequence` drops them.

A metric is one :class:`Metric`: its formula, its batch computation, whether it needs a
sequence, a reference order or an untrained model, its name and sign on loss matrices (where
it is computed on -NLL so that signs read as for scores), and how the findings test it and
word it (:mod:`curll.evaluate.findings`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from curll.artifacts import atomic_path
from curll.errors import CurllError

#: (what the value is, what a value > 0 means, what a value < 0 means); ``{a}``/``{b}``: the two
#: orders of a paired difference
Wording = tuple[str, str, str]
#: (m (B, n, n) trained position x test position, t, ind_diag (B, n) or None, base (B, n) or None) -> (B,)
Formula = Callable[[np.ndarray, int, "np.ndarray | None", "np.ndarray | None"], np.ndarray]


@dataclass(frozen=True)
class Metric:
    name: str  # its name on judge scores: AP, FGT, ...
    formula: str  # in the module docstring's notation
    compute: Formula  # the formula on a batch of matrices, NaN where a mean is over nothing
    loss_name: str  # its name on loss matrices, where it is computed on -NLL (signs as for scores)
    judge: Wording
    loss: Wording
    sequence: bool = False  # defined only for models trained one on top of another
    needs: Literal["reference", "untrained"] | None = None  # the other matrix it compares with
    test: Literal["value", "difference"] | None = None  # how a claim tests it; None: shown, not tested
    level: bool = False  # a level, not a change: on loss matrices given back as a loss (AP: mean NLL)


def _ap(m: np.ndarray, t: int, _ind: np.ndarray | None, _base: np.ndarray | None) -> np.ndarray:
    return nanmean(m[:, t, : t + 1])


def _fgt(m: np.ndarray, t: int, _ind: np.ndarray | None, _base: np.ndarray | None) -> np.ndarray:
    if not t:
        return np.full(len(m), np.nan)
    earlier = m[:, :t, :t]  # (B, j, i): rows j < t, columns i < t
    rows = np.arange(t)
    valid = rows[:, None] >= rows[None, :]  # (j, i): j in [i, t-1]
    peak = np.where(valid & ~np.isnan(earlier), earlier, -np.inf).max(axis=1)  # (B, i)
    peak = np.where(np.isinf(peak), np.nan, peak)
    return nanmean(peak - m[:, t, :t])


def _bwt(m: np.ndarray, t: int, _ind: np.ndarray | None, _base: np.ndarray | None) -> np.ndarray:
    if not t:
        return np.full(len(m), np.nan)
    rows = np.arange(t)
    return nanmean(m[:, t, :t] - m[:, rows, rows])


def _fwt(m: np.ndarray, t: int, ind: np.ndarray | None, _base: np.ndarray | None) -> np.ndarray:
    assert ind is not None
    own = np.arange(1, t + 1)
    return nanmean(m[:, own, own] - ind[:, own])


def _fwt0(m: np.ndarray, t: int, _ind: np.ndarray | None, base: np.ndarray | None) -> np.ndarray:
    assert base is not None
    own = np.arange(1, t + 1)
    return nanmean(m[:, own - 1, own] - base[:, own])


#: every CL metric, in the order tables list them
METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("AP", "mean over i <= t of J[t][i]", _ap, "mean_nll",
           judge=("mean judge score", "{a} scores higher than {b}", "{a} scores lower than {b}"),
           loss=("mean NLL per answer token", "{a}'s loss is higher than {b}'s",
                 "{a}'s loss is lower than {b}'s"),
           test="difference", level=True),
    Metric("FGT", "mean over i < t of (max over j in [i, t-1] of J[j][i] - J[t][i])", _fgt, "FGT_nll_rise",
           judge=("forgetting (judge)", "earlier scores fell below their best", "earlier scores rose"),
           loss=("forgetting (loss)", "older stages' loss rose above its best", "older stages' loss fell"),
           sequence=True),
    Metric("BWT", "mean over i < t of (J[t][i] - J[i][i])", _bwt, "BWT_nll_fall",
           judge=("backward transfer (judge)", "later stages raised earlier scores",
                  "later stages lowered earlier scores: forgetting"),
           loss=("backward transfer (loss)", "later stages lowered older stages' loss",
                 "later stages raised older stages' loss: forgetting"),
           sequence=True, test="value"),
    Metric("FWT", "mean over 1 <= i <= t of (J[i][i] - Jind[i][i])", _fwt, "FWT_nll_fall",
           judge=("forward transfer (judge)", "scores above the independent models",
                  "scores below the independent models"),
           loss=("forward transfer (loss)", "loss below the independent models",
                 "loss above the independent models"),
           needs="reference", test="value"),
    Metric("FWT_zero_shot", "mean over 1 <= i <= t of (J[i-1][i] - b_i)", _fwt0, "FWT_zero_shot_nll_fall",
           judge=("zero-shot transfer (judge)", "scores above the untrained model",
                  "scores below the untrained model"),
           loss=("zero-shot transfer (loss)", "loss below the untrained model",
                 "loss above the untrained model"),
           needs="untrained", test="value"),
)}  # fmt: skip

#: CL metric names on loss matrices: each is computed on -NLL (higher is better, as for judge
#: scores), so its sign reads as for scores; AP is given back as a loss
LOSS_NAMES = {m.name: m.loss_name for m in METRICS.values()}


@dataclass(frozen=True)
class CLMetrics:
    """Per-t series of every metric computed (index = position in ``stages``); ``m[name]`` is a
    metric's series, None when it was not computed (no reference, no untrained model, not a
    sequence)."""

    stages: tuple[int, ...]
    series: Mapping[str, tuple[float | None, ...]]

    def __getitem__(self, name: str) -> tuple[float | None, ...] | None:
        return self.series.get(name)

    def final(self) -> dict[str, float | None]:
        """Values at the last trained stage T (the ones papers report), in :data:`METRICS` order."""
        return {name: self.series[name][-1] for name in METRICS if name in self.series}

    def without_sequence(self) -> CLMetrics:
        """The metrics of models that were not trained one on top of another: none of the
        metrics that describe a sequence (FGT, BWT)."""
        kept = {k: v for k, v in self.series.items() if not METRICS[k].sequence}
        return replace(self, series=kept)

    def to_json(self) -> dict[str, Any]:
        """``T`` and the final values at the top, then every series keyed by stage label."""
        series = {k: dict(zip(map(str, self.stages), v, strict=True)) for k, v in self.series.items()}
        return {"T": self.stages[-1], **self.final(), "series": series}


def _square(j: pd.DataFrame) -> tuple[tuple[int, ...], np.ndarray]:
    """The (trained stage x test stage) square; a trained stage without a test column (no test
    item of that stage and type) is a column of NaN: not measured, left out of every mean."""
    stages = tuple(int(s) for s in j.index)
    if list(stages) != sorted(set(stages)):
        raise ValueError(f"trained_to must be increasing and unique, got {list(stages)}")
    cols = {int(c): c for c in j.columns}
    values = j.to_numpy(dtype=float)
    m = np.full((len(stages), len(stages)), math.nan)
    for si, s in enumerate(stages):
        if s in cols:
            m[:, si] = values[:, j.columns.get_loc(cols[s])]
    return stages, m


def cl_batch(
    m: np.ndarray, t: int, *, ind_diag: np.ndarray | None = None, base: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Every metric of :data:`METRICS` whose input is given, at position ``t`` of a batch of
    square matrices: ``m`` (B, n, n) float, trained position x test position, NaN = not
    measured; ``ind_diag`` (B, n) the reference (independent) models' diagonal, ``base`` (B, n)
    the untrained model's scores by test position. Returns name -> (B,) float, NaN where a mean
    is over nothing. Vectorised over B so that every bootstrap replicate is computed at once."""
    given = {"reference": ind_diag, "untrained": base}
    return {name: metric.compute(m, t, ind_diag, base) for name, metric in METRICS.items()
            if metric.needs is None or given[metric.needs] is not None}  # fmt: skip


def nanmean(x: np.ndarray) -> np.ndarray:
    """Mean over the last axis leaving out NaN; NaN where every value is NaN (no warning)."""
    kept = ~np.isnan(x)
    n = kept.sum(axis=-1)
    total = np.where(kept, x, 0.0).sum(axis=-1)
    return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def cl_metrics(
    j: pd.DataFrame, *, independent: pd.DataFrame | None = None, untrained: pd.Series | None = None
) -> CLMetrics:
    """Metrics of matrix ``j`` (:func:`cl_batch` at every position); FWT needs ``independent``
    (same layout: the reference order's matrix), FWT0 ``untrained`` (scores by test stage). A
    trained stage with no test column counts as not measured."""
    stages, m = _square(j)
    n = len(stages)
    ind = None
    if independent is not None:
        frame = independent.copy()
        frame.index = frame.index.astype(int)
        frame.columns = [int(c) for c in frame.columns]
        ind = np.array([[float(frame.at[s, s]) if s in frame.index and s in frame.columns else math.nan  # type: ignore[arg-type]
                         for s in stages]])  # fmt: skip
    base = None
    if untrained is not None:
        b = {int(str(k)): float(v) for k, v in untrained.items()}
        base = np.array([[b.get(s, math.nan) for s in stages]])
    at = [cl_batch(m[None], t, ind_diag=ind, base=base) for t in range(n)]
    return CLMetrics(stages, {name: tuple(_value(v[name][0]) for v in at) for name in at[0]})


def _value(v: float) -> float | None:
    return None if math.isnan(v) else round(float(v), 6)


def read_matrix(path: str | Path, *, untrained: bool = True) -> pd.DataFrame:
    """A matrix CSV: header ``trained_to,<stage>,<stage>,...`` (test stages 0..MAX_STAGE, each
    once), one row per model (``trained_to`` a stage, or -1 for the untrained model), numeric cells
    (plain decimals, :data:`curll.text.DECIMAL`; empty = not measured: never ``nan`` or ``inf``);
    blank lines are skipped. Read strictly (:func:`curll.csvio.read_csv`:
    UTF-8, no cells past the header's, no unclosed quote); a file with no data rows is refused.
    Errors name the file, the CSV row (header = 1) and the column. ``untrained`` False: a row of
    -1 is refused (a matrix of trained models: FWT0 would count the untrained one as trained)."""
    from curll.csvio import read_csv
    from curll.schemas.data import MAX_STAGE
    from curll.text import DECIMAL

    table = read_csv(path)
    p, header = table.path, [h.strip() for h in table.header]
    if header[0] != "trained_to":
        raise CurllError(f"the first column must be 'trained_to', not {header[0]!r}", file=p, row=1,
                         field=header[0])  # fmt: skip
    columns: list[int] = []
    for col in header[1:]:
        stage = _stage(col, 0)
        if stage is None:
            raise CurllError(f"a test-stage column must be a stage number 0..{MAX_STAGE}", file=p, row=1,
                             field=col)  # fmt: skip
        if stage in columns:
            raise CurllError(f"stage {stage} has two columns", file=p, row=1, field=col)
        columns.append(stage)
    rows = [(n, cells) for n, cells in table.rows if any(c.strip() for c in cells)]  # blank lines: none
    if not rows:
        raise CurllError("no data rows: the file holds only its header", file=p, row=1)
    values: list[list[float]] = []
    index: list[int] = []
    for n, cells in rows:
        trained = _stage(cells[0], -1)
        if trained is None:
            raise CurllError(f"not a stage number 0..{MAX_STAGE} (or -1, untrained): {cells[0]!r}", file=p,
                             row=n, field="trained_to")  # fmt: skip
        if trained in index:
            raise CurllError(f"stage {trained} appears twice", file=p, row=n, field="trained_to")
        if trained == -1 and not untrained:
            raise CurllError("a row of trained_to -1 (the untrained model) belongs in the --untrained "
                             "file", file=p, row=n, field="trained_to")  # fmt: skip
        index.append(trained)
        vals = []
        for col, cell in zip(header[1:], cells[1:], strict=True):
            if cell.strip() and not DECIMAL.fullmatch(cell.strip()):  # not inf, nan, 1_0 (float() reads them)
                raise CurllError(f"not a number: {cell!r} (write a plain decimal, e.g. 3.5; empty: not "
                                 "measured)", file=p, row=n, field=col)  # fmt: skip
            vals.append(float(cell) if cell.strip() else math.nan)
        values.append(vals)
    return pd.DataFrame(values, index=pd.Index(index, name="trained_to"), columns=columns).sort_index()


def _stage(text: str, lowest: int) -> int | None:
    """The stage ``text`` names (ASCII digits, ``lowest``..MAX_STAGE), else None."""
    from curll.schemas.data import MAX_STAGE

    t = text.strip()
    digits = t[1:] if t.startswith("-") else t
    if not (digits.isascii() and digits.isdecimal()):
        return None
    stage = int(t)
    return stage if lowest <= stage <= MAX_STAGE else None


def write_matrix(j: pd.DataFrame, path: str | Path) -> None:
    """The layout :func:`read_matrix` reads (atomic)."""
    frame = j.copy()
    frame.index.name = "trained_to"
    frame.columns = [str(c) for c in frame.columns]
    with atomic_path(Path(path)) as tmp:
        frame.round(6).to_csv(tmp)
