"""From judged answers to stage x stage matrices and CL metrics, per order, type and group.

Input: the ``scores`` table (:func:`scores_table`): one row per (item, model) with ``score``
(mean judge rating, 1-5; :data:`curll.evaluate.judge.NO_ANSWER_SCORE` for a model that gave
no usable answer; NaN when no judge parsed; with ``evaluate.repeats`` > 1 the mean of these
over the model's answers of the item, so the bootstrap over items carries the answers' and
the judges' sampling noise), the model's ``order`` and ``trained_to``, and the item's
``stage``, ``type``, ``skill``, ``subskill``, ``indicator_id``.

- :func:`matrix`: J[trained_to][stage] = mean score of an order's models, for one type or
  ``sum`` (the per-type matrices added up, 3-15 with three types, as in the paper's tables).
  Rows are every trained stage of the order and columns every test stage of the kind, whether
  or not a cell has a score (a model whose every answer lacks a score stays, as a row of NaN);
  a ``sum`` cell is NaN unless every type has a score there (:func:`coverage` names the gaps).
- :func:`order_metrics`: :func:`curll.evaluate.cl.cl_metrics` of every order and type; FWT
  against the reference order's models (independent, :func:`curll.orders.reference`) when
  they were trained, zero-shot FWT against the untrained model when it was scored.
- :func:`group_metrics`: AP, FGT, BWT at the last stage for every skill, sub-skill or
  indicator (items of all types pooled, mean score), from one order's models.
- :func:`out_degree`: prerequisite edges from each indicator into later stages (paper Fig. 6).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from curll import orders
from curll.evaluate.cl import CLMetrics, cl_metrics
from curll.evaluate.judge import NO_ANSWER_SCORE, no_answer, with_repeat
from curll.schemas.evaluate import UNTRAINED

ITEM_KEYS = ["item_id", "stage", "type", "indicator_id", "skill", "subskill", "indicator"]


def scores_table(answers: pd.DataFrame, items: pd.DataFrame, item_scores: pd.DataFrame) -> pd.DataFrame:
    """One row per (item, model), in the answers' order: ``score`` is the mean over the model's
    answers of the item (one a ``repeat``) of each answer's score: the judges' mean
    (``item_scores``: :func:`curll.evaluate.judge.item_scores`), :data:`NO_ANSWER_SCORE` where the
    model gave no usable answer (never judged); an answer no judge parsed (or a backend error)
    is left out, and the score is NaN when no answer has one. ``no_answer``: every repeat gave
    no usable answer; ``judged``: the parsed ratings of all repeats; ``repeats``: the answers;
    ``answer``: repeat 0's. One answer per (item, model): the judges' mean, as ever."""
    keys = ["item_id", "run"]
    base = with_repeat(answers)[[*keys, "repeat", "order", "seed", "trained_to", "answer"]].assign(
        no_answer=no_answer(answers)
    )
    out = base.merge(with_repeat(item_scores), on=[*keys, "repeat"], how="left", validate="1:1")
    out["judged"] = out["judged"].fillna(0).astype("int64")
    out.loc[out["no_answer"], "score"] = NO_ANSWER_SCORE
    out = out.sort_values("repeat", kind="stable")  # the first row of an (item, model): repeat 0
    g = out.groupby(keys, sort=False)
    first = g[["order", "seed", "trained_to", "answer"]].first()
    agg = pd.DataFrame({"no_answer": g["no_answer"].all(), "score": g["score"].mean(),
                        "judged": g["judged"].sum(), "repeats": g.size()})  # fmt: skip
    per_model = base[keys].drop_duplicates().merge(first.join(agg).reset_index(), on=keys, validate="1:1")
    return per_model.merge(items[ITEM_KEYS], on="item_id", how="left", validate="m:1")


def _tested(scores: pd.DataFrame, kind: str) -> list[int]:
    """The test stages of ``kind`` (a type, or every type for ``sum`` and ``mean``), from every row."""
    rows = scores if kind in ("sum", "mean") else scores[scores["type"] == kind]
    return sorted(int(s) for s in rows["stage"].unique())


def matrix(scores: pd.DataFrame, order: str, kind: str = "sum", *, value: str = "mean") -> pd.DataFrame:
    """trained_to x test stage; ``kind``: a type, ``sum`` over types, or ``mean`` of all items.
    ``value``: ``mean`` score (weighted by a column ``w`` if there is one), or ``n``, the number
    of scores in the cell (for ``sum``: the fewest of any type). Rows: every ``trained_to`` of
    the order's models; columns: every test stage of ``kind`` in ``scores`` (all orders), so a
    cell with no score is NaN (n 0), not gone."""
    own = scores[scores["order"] == order]
    trained = sorted(int(t) for t in own["trained_to"].unique())
    if kind == "sum":
        parts = [matrix(scores, order, str(t), value=value).reindex(columns=_tested(scores, kind))
                 for t in sorted(scores["type"].unique())]  # fmt: skip
        if not parts:
            return pd.DataFrame(index=pd.Index(trained, name="trained_to"))
        if value == "n":
            return pd.concat(parts).fillna(0).astype(int).groupby(level=0).min().rename_axis("trained_to")
        return sum(parts[1:], parts[0])
    rows = own if kind == "mean" else own[own["type"] == kind]
    if value == "n":
        cells = rows.groupby(["trained_to", "stage"])["score"].count().unstack("stage")
    else:
        scored = rows["score"].notna().astype(float)
        cells = cell_means(rows, rows["score"].fillna(0.0), scored).unstack("stage")
    out = cells.reindex(index=trained, columns=_tested(scores, kind))
    out.index.name, out.columns.name = "trained_to", "stage"
    return out.fillna(0).astype(int) if value == "n" else out


def cell_means(rows: pd.DataFrame, num: pd.Series, den: pd.Series) -> pd.Series:
    """Per (trained_to, stage) cell of ``rows``: sum of ``num`` over sum of ``den``, each row
    weighted by its column ``w`` when there is one (a bootstrap replicate: how often its item
    was drawn); NaN where the weighted ``den`` is 0."""
    w = rows.get("w", 1.0)
    keys = [rows["trained_to"], rows["stage"]]
    n, d = (num * w).groupby(keys).sum(), (den * w).groupby(keys).sum()
    return n / d.where(d > 0)


def coverage(scores: pd.DataFrame, order: str, kinds: list[str]) -> dict[str, list[int]]:
    """kind -> the trained stages of ``order`` with no score at all of that kind as a test
    stage (a column of its matrix that is empty); for ``sum``: a stage where any type is missing."""
    out = {}
    for kind in kinds:
        n = matrix(scores, order, kind, value="n")
        trained = [int(s) for s in n.index]
        out[kind] = [s for s in trained if s not in n.columns or int(n[s].sum()) == 0]
    return out


Matrices = Mapping[tuple[str, str], pd.DataFrame]


def matrices(scores: pd.DataFrame, kinds: list[str]) -> dict[tuple[str, str], pd.DataFrame]:
    """(order, kind) -> :func:`matrix`, for every order present, the untrained model included."""
    return {(o, k): matrix(scores, o, k) for o in present_models(scores) for k in kinds}


def present_models(rows: pd.DataFrame) -> list[str]:
    """The registered orders with a row in ``rows``, in :data:`curll.orders.ORDERS` order, then
    the untrained model when it has one."""
    found = set(rows["order"])
    return [*orders.ranked(found), *([UNTRAINED] if UNTRAINED in found else [])]


def metrics_of(mats: Matrices, kinds: list[str]) -> dict[str, dict[str, Any]]:
    """order -> kind -> CLMetrics.to_json() of precomputed matrices (higher is better): FWT
    against the reference order's matrix when there is one, zero-shot FWT against the
    untrained model's single row when there is one."""
    out: dict[str, dict[str, Any]] = {}
    ref = orders.reference()
    for order in orders.ranked({key[0] for key in mats}):
        out[order] = {}
        for kind in kinds:
            ind = mats.get((ref, kind)) if ref is not None and order != ref else None
            base = mats.get((UNTRAINED, kind))
            zero = base.iloc[0] if base is not None and len(base) else None
            m = cl_metrics(mats[(order, kind)], independent=ind, untrained=zero)
            out[order][kind] = for_order(m, order).to_json()
    return out


def order_metrics(
    scores: pd.DataFrame, kinds: list[str], mats: Matrices | None = None
) -> dict[str, dict[str, Any]]:
    """order -> kind -> CLMetrics.to_json() and ``unmeasured_stages``; orders with models only
    (``mats``: :func:`matrices` of ``scores`` when already computed)."""
    out = metrics_of(matrices(scores, kinds) if mats is None else mats, kinds)
    for order in out:
        for kind, gaps in coverage(scores, order, kinds).items():  # stages the metrics could not see
            out[order][kind]["unmeasured_stages"] = gaps
    return out


def for_order(m: CLMetrics, order: str) -> CLMetrics:
    """No FGT/BWT for an order that is not sequential (its models are each trained from scratch,
    not one on top of another: forgetting and backward transfer describe a sequence)."""
    return m if orders.spec(order).sequential else m.without_sequence()


def group_metrics(scores: pd.DataFrame, order: str, level: str) -> pd.DataFrame:
    """One row per group of ``level`` (skill | subskill | indicator_id): its test stages and
    AP / FGT / BWT at the last trained stage of ``order``, and FWT against the reference
    order's models when they were scored (None where undefined)."""
    own = scores[scores["order"] == order]
    stages = sorted(own["trained_to"].unique())
    ref = orders.reference()
    ind_scores = scores[scores["order"] == ref] if order != ref else own.iloc[:0]

    def grid(g: pd.DataFrame) -> pd.DataFrame:
        j = g.pivot_table(index="trained_to", columns="stage", values="score", aggfunc="mean")
        return j.reindex(index=stages, columns=stages)

    rows = []
    for group, g in own.groupby(level, sort=True):
        ind = ind_scores[ind_scores[level] == group]
        m = cl_metrics(grid(g), independent=grid(ind) if len(ind) else None)
        final = {"FGT": None, "BWT": None, **for_order(m, order).final()}
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


def forgetting_vs_degree(scores: pd.DataFrame, degree: pd.Series, order: str) -> pd.DataFrame:
    """Per indicator with a defined forgetting: its out-degree and FGT at the last stage of
    ``order`` (a sequential order)."""
    fgt = group_metrics(scores, order, "indicator_id").set_index("group")["FGT"].dropna()
    return pd.DataFrame({"out_degree": degree.reindex(fgt.index).fillna(0).astype(int), "FGT": fgt})


def rubric_by_stage(rubric: pd.DataFrame, answers: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Mean rubric score per criterion (judges pooled) of each order's last model, by test stage:
    rows (order, stage), one column per criterion."""
    from curll.evaluate.judge import CRITERIA

    runs = answers[["item_id", "run", "order", "trained_to"]].drop_duplicates(["item_id", "run"])  # repeats
    joined = rubric.merge(runs, on=["item_id", "run"]).merge(items[["item_id", "stage"]], on="item_id")
    last = joined[joined["trained_to"] == joined.groupby("order")["trained_to"].transform("max")]
    return last.groupby(["order", "stage"], sort=True)[list(CRITERIA)].mean().round(3)
