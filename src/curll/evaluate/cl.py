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


def _mean(values: list[float]) -> float | None:
    kept = [v for v in values if not math.isnan(v)]
    return round(float(np.mean(kept)), 6) if kept else None


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


def cl_metrics(
    j: pd.DataFrame, *, independent: pd.DataFrame | None = None, untrained: pd.Series | None = None
) -> CLMetrics:
    """Metrics of matrix ``j``; FWT needs ``independent`` (same layout), FWT0 ``untrained``
    (scores by test stage). A trained stage with no test column counts as not measured."""
    stages, m = _square(j)
    n = len(stages)
    ap = [_mean([m[t, i] for i in range(t + 1)]) for t in range(n)]
    fgt = [_mean([float(np.nanmax(m[i:t, i])) - m[t, i] if not np.isnan(m[i:t, i]).all() else math.nan
                  for i in range(t)]) for t in range(n)]  # fmt: skip
    bwt = [_mean([m[t, i] - m[i, i] for i in range(t)]) for t in range(n)]
    fwt = None
    if independent is not None:
        ind = independent.copy()
        ind.index = ind.index.astype(int)
        ind.columns = [int(c) for c in ind.columns]
        diag = [float(ind.at[s, s]) if s in ind.index and s in ind.columns else math.nan for s in stages]  # type: ignore[arg-type]
        fwt = tuple(_mean([m[i, i] - diag[i] for i in range(1, t + 1)]) for t in range(n))
    zero = None
    if untrained is not None:
        b = {int(str(k)): float(v) for k, v in untrained.items()}
        zero = tuple(
            _mean([m[i - 1, i] - b.get(stages[i], math.nan) for i in range(1, t + 1)]) for t in range(n)
        )
    return CLMetrics(stages, tuple(ap), tuple(fgt), tuple(bwt), fwt, zero)


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
