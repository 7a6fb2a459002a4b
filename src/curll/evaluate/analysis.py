"""From judged answers to stage x stage matrices and CL metrics, per order, type and group.

Input: the ``scores`` table (:func:`scores_table`): one row per (item, model) with ``score``
(mean judge rating, 1-5; NaN when no judge parsed), the model's ``order`` and
``trained_to``, and the item's ``stage``, ``type``, ``skill``, ``subskill``, ``indicator_id``.

- :func:`matrix`: J[trained_to][stage] = mean score of an order's models, for one type or
  ``sum`` (the per-type matrices added up, 3-15 with three types, as in the paper's tables).
- :func:`order_metrics`: :func:`curll.evaluate.cl.cl_metrics` of every order and type; FWT
  against the independent models when they were trained, zero-shot FWT against the
  untrained model when it was scored.
- :func:`group_metrics`: AP, FGT, BWT at the last stage for every skill, sub-skill or
  indicator (items of all types pooled, mean score), from one order's models.
- :func:`out_degree`: prerequisite edges from each indicator into later stages (paper Fig. 6).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from curll.evaluate.cl import CLMetrics, cl_metrics

ORDERS = ("independent", "joint", "continual")
ITEM_KEYS = ["item_id", "stage", "type", "indicator_id", "skill", "subskill", "indicator"]


def scores_table(answers: pd.DataFrame, items: pd.DataFrame, item_scores: pd.DataFrame) -> pd.DataFrame:
    base = answers[["item_id", "run", "order", "trained_to", "answer"]]
    out = base.merge(item_scores, on=["item_id", "run"], how="left", validate="1:1")
    out["judged"] = out["judged"].fillna(0).astype("int64")  # a rejected answer: no judge, score NaN
    return out.merge(items[ITEM_KEYS], on="item_id", how="left", validate="m:1")


def matrix(scores: pd.DataFrame, order: str, kind: str = "sum") -> pd.DataFrame:
    """trained_to x test stage; ``kind``: a type, ``sum`` over types, or ``mean`` of all items."""
    own = scores[scores["order"] == order]
    if kind == "mean":
        return own.pivot_table(index="trained_to", columns="stage", values="score", aggfunc="mean")
    if kind != "sum":
        own = own[own["type"] == kind]
        return own.pivot_table(index="trained_to", columns="stage", values="score", aggfunc="mean")
    parts = [matrix(own, order, str(t)) for t in sorted(own["type"].unique())]
    return sum(parts[1:], parts[0]) if parts else pd.DataFrame()


def untrained(scores: pd.DataFrame, kind: str) -> pd.Series | None:
    m = matrix(scores, "untrained", kind)
    return m.iloc[0] if len(m) else None


def order_metrics(scores: pd.DataFrame, kinds: list[str]) -> dict[str, dict[str, Any]]:
    """order -> kind -> CLMetrics.to_json(); orders with models only."""
    out: dict[str, dict[str, Any]] = {}
    present = set(scores["order"])
    for order in [o for o in ORDERS if o in present]:
        out[order] = {}
        for kind in kinds:
            ind = (
                matrix(scores, "independent", kind)
                if "independent" in present and order != "independent"
                else None
            )
            m = cl_metrics(matrix(scores, order, kind), independent=ind, untrained=untrained(scores, kind))
            out[order][kind] = _for_order(m, order).to_json()
    return out


def _for_order(m: CLMetrics, order: str) -> CLMetrics:
    """The independent models are trained from scratch, not one on top of another: no FGT/BWT."""
    return m.without_sequence() if order == "independent" else m


def group_metrics(scores: pd.DataFrame, order: str, level: str) -> pd.DataFrame:
    """One row per group of ``level`` (skill | subskill | indicator_id): its test stages and
    AP / FGT / BWT at the last trained stage of ``order``, and FWT against the independent
    models when they were scored (None where undefined)."""
    own = scores[scores["order"] == order]
    stages = sorted(own["trained_to"].unique())
    ind_scores = scores[scores["order"] == "independent"] if order != "independent" else own.iloc[:0]

    def grid(g: pd.DataFrame) -> pd.DataFrame:
        j = g.pivot_table(index="trained_to", columns="stage", values="score", aggfunc="mean")
        return j.reindex(index=stages, columns=stages)

    rows = []
    for group, g in own.groupby(level, sort=True):
        ind = ind_scores[ind_scores[level] == group]
        m = cl_metrics(grid(g), independent=grid(ind) if len(ind) else None)
        final = {"FGT": None, "BWT": None, **_for_order(m, order).final()}
        tested = ",".join(map(str, sorted(g["stage"].unique())))
        rows.append({"level": level, "group": str(group), "stages": tested,
                     "items": int(g["item_id"].nunique()), "FWT": None, **final})  # fmt: skip
    return pd.DataFrame(rows, columns=["level", "group", "stages", "items", "AP", "FGT", "BWT", "FWT"])


def out_degree(edges: pd.DataFrame, indicators: pd.DataFrame) -> pd.Series:
    """indicator_id -> number of prerequisite edges to indicators of later stages; only edges
    the graph keeps count (``status`` ok: the weight request succeeded too)."""
    stage = indicators.set_index("indicator_id")["stage"]
    e = edges[edges["edge"].astype(bool) & (edges["status"] == "ok")]
    later = e[e["dst"].map(stage) > e["src"].map(stage)]
    return later.groupby("src").size().reindex(indicators["indicator_id"], fill_value=0).rename("out_degree")


def forgetting_vs_degree(scores: pd.DataFrame, degree: pd.Series, order: str = "continual") -> pd.DataFrame:
    """Per indicator with a defined forgetting: its out-degree and FGT at the last stage."""
    fgt = group_metrics(scores, order, "indicator_id").set_index("group")["FGT"].dropna()
    return pd.DataFrame({"out_degree": degree.reindex(fgt.index).fillna(0).astype(int), "FGT": fgt})


def rubric_by_stage(rubric: pd.DataFrame, answers: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Mean rubric score per criterion (judges pooled) of each order's last model, by test stage:
    rows (order, stage), one column per criterion."""
    from curll.evaluate.judge import CRITERIA

    runs = answers[["item_id", "run", "order", "trained_to"]]
    joined = rubric.merge(runs, on=["item_id", "run"]).merge(items[["item_id", "stage"]], on="item_id")
    last = joined[joined["trained_to"] == joined.groupby("order")["trained_to"].transform("max")]
    return last.groupby(["order", "stage"], sort=True)[list(CRITERIA)].mean().round(3)
