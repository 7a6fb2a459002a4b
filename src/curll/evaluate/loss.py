"""Loss matrices and their CL metrics from the per-record NLL of :mod:`curll.evaluate.nll`.

:func:`loss_matrix` averages per cell: J[trained_to][stage] = the cell's summed NLL over its
summed answer tokens (nats per answer token; lower is better), with the layout of
:func:`curll.evaluate.analysis.matrix` (every trained stage a row, every test stage a column).
:func:`loss_metrics` gives the CL metrics of those matrices, computed on -NLL so that every sign
reads as for judge scores, and named with that sign.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from curll.evaluate.analysis import cell_means, metrics_of, present_models
from curll.evaluate.cl import LOSS_NAMES, METRICS


def loss_matrix(losses: pd.DataFrame, order: str, kind: str, *, value: str = "mean") -> pd.DataFrame:
    """trained_to x test stage of ``order``'s models from a LossSchema table (one split);
    ``kind``: a type or ``all``. ``value``: ``mean`` NLL per answer token (token-weighted; each
    record also weighted by a column ``w`` if there is one), or
    ``n``, the (record, model) rows scored in the cell: records x seeds. Empty cells: NaN (``n`` 0)."""
    scored = losses[losses["tokens"] > 0]
    typed = scored if kind == "all" else scored[scored["type"] == kind]
    own = typed[typed["order"] == order]
    trained = sorted(int(t) for t in losses.loc[losses["order"] == order, "trained_to"].unique())
    stages = sorted(
        int(s) for s in (losses if kind == "all" else losses[losses["type"] == kind])["stage"].unique()
    )
    if value == "n":
        cells = own.groupby(["trained_to", "stage"])["record_id"].count()
    else:
        cells = cell_means(own, own["nll"], own["tokens"].astype(float))
    out = cells.unstack("stage").reindex(index=trained, columns=stages) if len(own) else (
        pd.DataFrame(np.nan, index=trained, columns=stages))  # fmt: skip
    out.index.name, out.columns.name = "trained_to", "stage"
    return out.fillna(0).astype(int) if value == "n" else out.astype(float)


def loss_matrices(losses: pd.DataFrame, kinds: list[str]) -> dict[tuple[str, str], pd.DataFrame]:
    """(order, kind) -> :func:`loss_matrix`, for every order present, the untrained model included."""
    return {(o, k): loss_matrix(losses, o, k) for o in present_models(losses) for k in kinds}


def loss_metrics(mats: Mapping[tuple[str, str], pd.DataFrame], kinds: list[str]) -> dict[str, dict[str, Any]]:
    """order -> kind -> final values and series of the CL metrics of loss matrices
    (:func:`loss_matrices`), named with their sign (:data:`curll.evaluate.cl.LOSS_NAMES`):
    ``mean_nll`` (AP as a loss: lower is better), ``FGT_nll_rise`` (how far the loss on earlier
    stages rose above its best: forgetting, positive is worse), ``BWT_nll_fall``,
    ``FWT_nll_fall`` (against the independent models) and ``FWT_zero_shot_nll_fall`` (against
    the untrained model): positive is better. Orders that are not sequential get no FGT/BWT."""
    out: dict[str, dict[str, Any]] = {}
    for order, by_kind in metrics_of({k: -j for k, j in mats.items()}, kinds).items():
        out[order] = {}
        for kind, raw in by_kind.items():
            final = {LOSS_NAMES[k]: _as_loss(k, v) for k, v in raw.items() if k in LOSS_NAMES}
            series = {
                LOSS_NAMES[k]: {s: _as_loss(k, x) for s, x in v.items()} for k, v in raw["series"].items()
            }
            out[order][kind] = {"T": raw["T"], **final, "series": series}
    return out


def _as_loss(metric: str, v: float | None) -> float | None:
    """A level metric of -NLL (AP) back to a mean NLL; the other metrics keep their sign."""
    return -v if METRICS[metric].level and v is not None else v
