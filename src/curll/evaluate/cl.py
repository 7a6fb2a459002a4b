"""Continual-learning metrics of a stage x stage score matrix (SPEC section 4).

``J`` is a DataFrame indexed by ``trained_to`` (the last stage a model was trained on, in
training order) with one column per test stage: ``J.loc[t, i]`` is the score on stage i's
test set of the model trained up to stage t. Stages are matched by label, so a run over
stages 2-4 works as well as one over 0-4; NaN (not measured) cells are left out of means.
With positions k = 0..T over the trained stages s_0 < s_1 < ...:

- ``AP_t``  = mean over i <= t of J[t][i]
- ``FGT_t`` = mean over i < t of (max over j in [i, t-1] of J[j][i]  -  J[t][i])
- ``BWT_t`` = mean over i < t of (J[t][i] - J[i][i])
- ``FWT_t`` = mean over 1 <= i <= t of (J[i][i] - Jind[i][i]), Jind from independent models
- ``FWT0_t`` = mean over 1 <= i <= t of (J[i-1][i] - b_i), b from an untrained model

A series has one value per t; a value whose mean is over nothing is None (FGT, BWT and FWT
at t = 0). FGT and BWT describe a sequence of models each trained on top of the last; for
models trained from scratch (the independent order) they are not defined: :meth:`CLMetrics.
without_sequence` drops them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from curll.artifacts import atomic_path
from curll.errors import CurllError


@dataclass(frozen=True)
class CLMetrics:
    """Per-t series (index = position in ``stages``) and their values at the last stage."""

    stages: tuple[int, ...]
    AP: tuple[float | None, ...]
    FGT: tuple[float | None, ...] | None
    BWT: tuple[float | None, ...] | None
    FWT: tuple[float | None, ...] | None = None
    FWT_zero_shot: tuple[float | None, ...] | None = None

    def final(self) -> dict[str, float | None]:
        """Values at the last trained stage T (the ones papers report)."""
        out = {"AP": self.AP[-1]}
        if self.FGT is not None and self.BWT is not None:
            out.update(FGT=self.FGT[-1], BWT=self.BWT[-1])
        if self.FWT is not None:
            out["FWT"] = self.FWT[-1]
        if self.FWT_zero_shot is not None:
            out["FWT_zero_shot"] = self.FWT_zero_shot[-1]
        return out

    def without_sequence(self) -> CLMetrics:
        """The metrics of models that were not trained one on top of another: no FGT, no BWT."""
        return replace(self, FGT=None, BWT=None)

    def to_json(self) -> dict[str, Any]:
        """``T`` and the final values at the top, then every series keyed by stage label."""
        series = {k: dict(zip(map(str, self.stages), v, strict=True)) for k, v in asdict(self).items()
                  if k != "stages" and v is not None}  # fmt: skip
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
    """The metrics at position ``t`` of a batch of square matrices, the formulas of the module
    docstring: ``m`` (B, n, n) float, trained position x test position, NaN = not measured;
    ``ind_diag`` (B, n) the independent models' diagonal, ``base`` (B, n) the untrained model's
    scores by test position. Returns name -> (B,) float, NaN where a mean is over nothing.
    Vectorised over B so that every bootstrap replicate is computed at once."""
    out = {"AP": nanmean(m[:, t, : t + 1])}
    if t:
        earlier = m[:, :t, :t]  # (B, j, i): rows j < t, columns i < t
        rows = np.arange(t)
        valid = rows[:, None] >= rows[None, :]  # (j, i): j in [i, t-1]
        peak = np.where(valid & ~np.isnan(earlier), earlier, -np.inf).max(axis=1)  # (B, i)
        peak = np.where(np.isinf(peak), np.nan, peak)
        out["FGT"] = nanmean(peak - m[:, t, :t])
        out["BWT"] = nanmean(m[:, t, :t] - m[:, rows, rows])
    else:
        out["FGT"] = out["BWT"] = np.full(len(m), np.nan)
    if ind_diag is not None:
        own = np.arange(1, t + 1)
        out["FWT"] = nanmean(m[:, own, own] - ind_diag[:, own])
    if base is not None:
        own = np.arange(1, t + 1)
        out["FWT_zero_shot"] = nanmean(m[:, own - 1, own] - base[:, own])
    return out


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
    (same layout), FWT0 ``untrained`` (scores by test stage). A trained stage with no test
    column counts as not measured."""
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

    def series(name: str) -> tuple[float | None, ...]:
        return tuple(_value(v[name][0]) for v in at)

    return CLMetrics(stages, series("AP"), series("FGT"), series("BWT"),
                     series("FWT") if ind is not None else None,
                     series("FWT_zero_shot") if base is not None else None)  # fmt: skip


def _value(v: float) -> float | None:
    return None if math.isnan(v) else round(float(v), 6)


def read_matrix(path: str | Path) -> pd.DataFrame:
    """A matrix CSV: header ``trained_to,<stage>,<stage>,...``, one row per model, numeric cells
    (empty = not measured). Errors name the file, the CSV row (header = 1) and the column."""
    p = Path(path)
    if not p.is_file():
        raise CurllError("matrix file not found", file=p)
    raw = pd.read_csv(p, dtype=str, keep_default_na=False)
    if not len(raw.columns) or raw.columns[0] != "trained_to":
        raise CurllError("the first column must be 'trained_to'", file=p, row=1, field=str(raw.columns[:1]))
    for col in raw.columns[1:]:
        if not str(col).lstrip("-").isdigit():
            raise CurllError("test-stage columns must be stage numbers", file=p, row=1, field=str(col))
    values: list[list[float]] = []
    index: list[int] = []
    for n, row in enumerate(raw.itertuples(index=False), start=2):
        cells = list(row)
        try:
            index.append(int(cells[0]))
        except ValueError:
            raise CurllError(f"not a stage number: {cells[0]!r}", file=p, row=n, field="trained_to") from None
        vals = []
        for col, cell in zip(raw.columns[1:], cells[1:], strict=True):
            try:
                vals.append(float(cell) if str(cell).strip() else math.nan)
            except ValueError:
                raise CurllError(f"not a number: {cell!r}", file=p, row=n, field=str(col)) from None
        values.append(vals)
    if len(set(index)) != len(index):
        raise CurllError("a trained_to stage appears twice", file=p, field="trained_to")
    columns = [int(c) for c in raw.columns[1:]]
    return pd.DataFrame(values, index=pd.Index(index, name="trained_to"), columns=columns).sort_index()


def write_matrix(j: pd.DataFrame, path: str | Path) -> None:
    """The layout :func:`read_matrix` reads (atomic)."""
    frame = j.copy()
    frame.index.name = "trained_to"
    frame.columns = [str(c) for c in frame.columns]
    with atomic_path(Path(path)) as tmp:
        frame.round(6).to_csv(tmp)
