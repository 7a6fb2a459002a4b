"""Everything the ``evaluate`` stage reports, computed once: :func:`compute` makes one
:class:`Results` from the scores, from which :mod:`curll.evaluate.report` renders each output
(``metrics.json``, ``matrices/``, the figures, ``report.html``) without computing again.

For the orders present in ``scores``: stage x stage matrices per type and summed, CL metrics
per order and type (:mod:`curll.evaluate.cl`), the difference of each upper-bound order minus
each sequential order (joint minus continual), AP/FGT/BWT/FWT per skill, sub-skill and
indicator, the first sequential order's forgetting against out-degree, and the readability
(Flesch-Kincaid grade) of answers per test stage next to that of the reference answers; with
``losses``, the same matrices and metrics of the judge-free loss (:mod:`curll.evaluate.loss`),
the untrained model's row, each order's unigram baseline and its gain over it; with bootstrap
``samples``, 95% intervals of everything (:mod:`curll.evaluate.intervals`), paired differences
between orders, and the claims with Holm's correction (:mod:`curll.evaluate.findings`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from curll import orders as order_specs
from curll.evaluate import analysis
from curll.evaluate.findings import as_json, baseline_verdict, claims
from curll.evaluate.intervals import Interval, crossed, seeds_of, single_strata_of, small_sample
from curll.evaluate.judge import NO_ANSWER_SCORE, unanswered
from curll.evaluate.loss import loss_matrices, loss_matrix, loss_metrics
from curll.evaluate.report_figures import MIN_DEGREES, RATING, Cells
from curll.evaluate.report_tables import with_n
from curll.evaluate.values import judge_ranges, judge_values, loss_values
from curll.schemas.evaluate import UNTRAINED

LEVELS = ("skill", "subskill", "indicator_id")


@dataclass
class Results:
    """What the report shows, by the output it goes to: ``metrics`` (``metrics.json``), ``details``
    (``matrices/details.json``: the per-stage series), ``matrices`` (file stem -> a matrix with its
    counts and interval: ``<stem>.csv``, ``_n``, ``_lo``, ``_hi``), ``levels`` (file name -> a
    per-group table), ``tables`` (the report's tables) and what the figures draw."""

    metrics: dict[str, Any]
    details: dict[str, Any] = field(default_factory=dict)
    matrices: dict[str, Cells] = field(default_factory=dict)
    levels: dict[str, pd.DataFrame] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    judged: set[str] = field(default_factory=set)  # the names of the tables of judge scores
    kinds: list[str] = field(default_factory=list)  # the judged types
    informative: bool = True  # the judge panel passed its controls
    sums: dict[str, Cells] = field(default_factory=dict)  # order -> summed judge scores
    loss: dict[str, Cells] = field(default_factory=dict)  # order -> loss, all types
    gains: dict[str, Cells] = field(default_factory=dict)  # order -> gain over the unigram
    differences: list[tuple[str, str, Cells]] = field(default_factory=list)  # (a, b, a minus b)
    degree: tuple[str, pd.DataFrame, float | None] | None = None  # (order, FGT vs out-degree, rho)


def readability(scores: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Mean Flesch-Kincaid grade per test stage: references, and each order's last model."""
    import textstat

    def grade(texts: pd.Series) -> float | None:
        kept = [t for t in texts if len(str(t).split()) >= 3]
        return round(sum(textstat.flesch_kincaid_grade(t) for t in kept) / len(kept), 2) if kept else None

    out = {"reference": items.groupby("stage")["reference"].apply(grade)}
    for order, g in scores.groupby("order", sort=True):
        last = g[g["trained_to"] == g["trained_to"].max()]
        out[f"{order} (last model)"] = last.groupby("stage")["answer"].apply(grade)
    return pd.DataFrame(out).rename_axis("test stage")


def compute(
    scores: pd.DataFrame,
    items: pd.DataFrame,
    degree: pd.Series,
    kinds: list[str],
    *,
    answers: pd.DataFrame | None = None,
    rubric: pd.DataFrame | None = None,
    losses: pd.DataFrame | None = None,
    samples: int = 0,
    seed: int = 0,
    judge_informative: bool = True,
) -> Results:
    """``samples`` > 0: 95% bootstrap intervals (seeded with ``seed``) of every cell and metric
    (:mod:`curll.evaluate.intervals`), as ``<metric>_lo``/``_hi`` and the matrices' ``lo``/``hi``,
    paired differences between orders, and the claims (:mod:`curll.evaluate.findings`) with
    Holm's correction; the judge's tests only when ``judge_informative``."""
    orders = order_specs.ranked(set(scores["order"]))
    all_kinds = [*kinds, "sum"]
    mats = analysis.matrices(scores, all_kinds)
    full = analysis.order_metrics(scores, all_kinds, mats)
    # metrics.json keeps the values at the last stage (columns of `dvc exp show`); the per-stage
    # series and the per-stage readability go to matrices/details.json
    finals = {o: {k: {m: v for m, v in vals.items() if m != "series"} for k, vals in by_kind.items()}
              for o, by_kind in full.items()}  # fmt: skip
    pairs = _compared(orders)
    bounds = crossed(scores, "item_id", samples, seed,
                     lambda rows, w: _paired_cells(judge_values(rows, w, all_kinds), pairs),
                     ranges=judge_ranges(scores, all_kinds))  # fmt: skip
    _add_bounds(finals, bounds)
    res = Results(metrics={"orders": finals}, kinds=kinds, informative=judge_informative)
    res.metrics["bootstrap"] = {
        "samples": samples,
        "seed": seed,
        "unit": "test item (within stage and type) x training seed",
        "interval": "value +- t(df) x bootstrap SE x inflation, clipped to a judge value's bounds",
        "inflation": {"judge": small_sample(scores, "item_id")},
        "seeds": {"judge": seeds_of(scores)},
        "single_item_strata": {"judge": single_strata_of(scores, "item_id")},
    }
    family_bounds = {"judge": bounds}
    res.metrics["no_answer"] = {  # blank or looping answers: scored NO_ANSWER_SCORE, counted
        "score": NO_ANSWER_SCORE,
        "total": int(scores["no_answer"].sum()),
        "answers": len(scores),
        "by_run": {str(k): int(v) for k, v in scores.groupby("run")["no_answer"].sum().items() if v},
    }
    if answers is not None:  # other rejects (backend errors): missing scores, counted
        missed = {r: k for r, k in unanswered(answers).items() if k}
        res.metrics["unanswered"] = {"total": sum(missed.values()), "answers": len(answers), "by_run": missed}
    res.details["series"] = {
        o: {k: vals["series"] for k, vals in kinds_.items()} for o, kinds_ in full.items()
    }
    for order in [*orders, *([UNTRAINED] if UNTRAINED in set(scores["order"]) else [])]:
        for kind in all_kinds:
            cells = _cells(mats[(order, kind)], analysis.matrix(scores, order, kind, value="n"), bounds,
                           f"{order}/{kind}")  # fmt: skip
            res.matrices[f"{order}_{kind}"] = cells
            if order != UNTRAINED and kind == "sum":
                name = f"{order}: summed scores [95% interval] (n: scores per cell, fewest of any type)"
                res.tables[name] = with_n(cells.values, cells.n, cells.lo, cells.hi)
                res.judged.add(name)
                res.sums[order] = cells
    if losses is not None:
        family_bounds["loss"] = _loss_section(res, losses, kinds, samples, seed)
    if samples:
        found = claims(family_bounds, judge_informative=judge_informative)
        res.metrics["baseline"] = baseline_verdict(family_bounds.get("loss", {}))
        for order, verdict in res.metrics["baseline"]["orders"].items():  # the baseline's own-stage NLL
            uni = res.matrices.get(f"loss_{order}_all_unigram")
            verdict["unigram"] = None if uni is None else _own_stage(uni.values)
        res.metrics["claims"] = as_json(found)
        res.metrics["differences"] = {f: _differences(b) for f, b in family_bounds.items()}
    for a, b in pairs:
        diff = mats[(a, "sum")] - mats[(b, "sum")]
        n = res.sums[a].n.where(res.sums[a].n <= res.sums[b].n, res.sums[b].n)
        cells = _cells(diff, n, bounds, f"{a}-{b}/sum", prefix="paired")
        res.matrices[f"{a}_minus_{b}_sum"] = cells
        res.differences.append((a, b, cells))
    for order in orders:
        for level in LEVELS:
            table = analysis.group_metrics(scores, order, level).drop(columns="level")
            res.levels[f"{order}_by_{level.removesuffix('_id')}.csv"] = table
            if level == "skill":
                name = f"{order}: per skill (last stage), judge score (rating {RATING[0]:g}-{RATING[1]:g})"
                res.tables[name] = table
                res.judged.add(name)
    for order in order_specs.sequential(orders)[:1]:
        fd = analysis.forgetting_vs_degree(scores, degree, order)
        rho, p = _trend(fd)
        res.metrics["forgetting_vs_out_degree"] = {"indicators": len(fd),
                                                   "distinct_out_degrees": int(fd["out_degree"].nunique()),
                                                   "spearman": _num(rho), "p": _num(p)}  # fmt: skip
        res.degree = (order, fd, _num(rho))
    if rubric is not None and answers is not None and len(rubric):
        by_stage = analysis.rubric_by_stage(rubric, answers, items)
        name = "Rubric (grade-level fit) of each order's last model"
        res.tables[name] = by_stage
        res.judged.add(name)
        res.metrics["rubric"] = {
            str(o): {c: _num(v) for c, v in g.mean().items()} for o, g in by_stage.groupby(level=0)
        }
    read = readability(scores[scores["order"] != UNTRAINED], items)
    res.tables["Flesch-Kincaid grade of answers by test stage"] = read
    res.details["readability"] = {c: {str(k): _num(v) for k, v in read[c].items()} for c in read.columns}
    res.metrics["readability_grade"] = {c: _num(read[c].mean()) for c in read.columns}
    return res


def _loss_section(
    res: Results, losses: pd.DataFrame, kinds: list[str], samples: int, seed: int
) -> dict[str, Interval]:
    """Loss matrices of the test split (with their n and bounds, a table per order), the
    untrained model's row, each order's unigram baseline and its gain over it
    (``loss_<order>_<kind>_unigram``, ``_gain``), and their CL metrics with intervals
    (``metrics.loss``: finals; ``details.loss_series``). Returns the bounds."""
    test, all_kinds = losses[losses["split"] == "test"], [*kinds, "all"]
    mats = loss_matrices(test, all_kinds)
    full = loss_metrics(mats, all_kinds)
    finals = {o: {k: {m: v for m, v in vals.items() if m != "series"} for k, vals in by.items()}
              for o, by in full.items()}  # fmt: skip
    bounds = crossed(test, "record_id", samples, seed, lambda rows, w: loss_values(rows, w, all_kinds))
    _add_bounds(finals, bounds)
    res.metrics["loss"] = finals
    res.metrics["bootstrap"]["single_item_strata"]["loss"] = single_strata_of(test, "record_id")
    res.metrics["bootstrap"]["seeds"]["loss"] = seeds_of(test)
    res.metrics["bootstrap"]["inflation"]["loss"] = small_sample(test, "record_id")
    res.details["loss_series"] = {o: {k: vals["series"] for k, vals in by.items()} for o, by in full.items()}
    if UNTRAINED in set(test["order"]):
        for kind in all_kinds:
            j, n = loss_matrix(test, UNTRAINED, kind), loss_matrix(test, UNTRAINED, kind, value="n")
            res.matrices[f"loss_{UNTRAINED}_{kind}"] = _cells(j, n, bounds, f"{UNTRAINED}/{kind}")
    for order in full:
        for kind in all_kinds:
            j, n = mats[(order, kind)], loss_matrix(test, order, kind, value="n")
            loss = res.matrices[f"loss_{order}_{kind}"] = _cells(j, n, bounds, f"{order}/{kind}")
            uni = loss_matrix(test.assign(nll=test["unigram_nll"]), order, kind)
            res.matrices[f"loss_{order}_{kind}_unigram"] = _cells(
                uni, n, bounds, f"{order}/{kind}", "unigram"
            )
            gain = res.matrices[f"loss_{order}_{kind}_gain"] = _cells(
                uni - j, n, bounds, f"{order}/{kind}", "gain"
            )
            if kind == "all":
                name = (f"{order}: loss, nats per answer token, lower is better [95% interval] "
                        f"(n: records x seeds)")  # fmt: skip
                res.tables[name] = with_n(j, n, loss.lo, loss.hi)
                res.loss[order], res.gains[order] = loss, gain
    return bounds


def _own_stage(j: pd.DataFrame) -> float | None:
    """Mean of the cells (k, k) of a trained_to x stage matrix: each model on its own stage."""
    cells = j.to_numpy(dtype=float)
    own = [cells[r, list(j.columns).index(t)] for r, t in enumerate(j.index) if t in j.columns]
    kept = [float(v) for v in own if not np.isnan(v)]
    return round(sum(kept) / len(kept), 6) if kept else None


def _cells(
    j: pd.DataFrame, n: pd.DataFrame, bounds: Mapping[str, Interval], key: str, prefix: str = "cell"
) -> Cells:
    """A matrix with its counts, and (with bounds) its interval matrices, read from the bounds
    named ``<prefix>/<key>/<trained_to>/<stage>`` (``prefix``: ``cell``, ``unigram``, ``gain``,
    ``paired``); a cell without a bound is NaN."""
    if not bounds:
        return Cells(j, n)
    lo, hi = j.astype(float) * float("nan"), j.astype(float) * float("nan")
    for t in j.index:
        for s in j.columns:
            iv = bounds.get(f"{prefix}/{key}/{t}/{s}")
            if iv is not None:
                lo.at[t, s], hi.at[t, s] = iv.lo, iv.hi
    return Cells(j, n, lo, hi)


def _differences(bounds: dict[str, Interval]) -> dict[str, dict[str, float | None]]:
    """``<a>-<b>/<kind>/<metric>`` -> the paired difference, its interval and p-value."""
    return {k.removeprefix("diff/"): {"value": iv.value, "lo": iv.lo, "hi": iv.hi, "p": _r6(iv.p)}
            for k, iv in sorted(bounds.items()) if k.startswith("diff/")}  # fmt: skip


def _add_bounds(finals: dict[str, dict[str, dict[str, Any]]], bounds: dict[str, Interval]) -> None:
    """``<metric>_lo`` / ``_hi`` beside each final metric that has an interval, and the metric
    itself where the finals lack it (``gain_own``: bootstrapped, not a CL metric of a matrix)."""
    for name, iv in bounds.items():
        order, kind, metric = name.split("/", 2)
        if order != "cell" and order in finals and kind in finals[order]:
            finals[order][kind].setdefault(metric, iv.value)
            finals[order][kind].update({f"{metric}_lo": iv.lo, f"{metric}_hi": iv.hi})


def _compared(orders: list[str]) -> list[tuple[str, str]]:
    """(a, b) of every difference map: each upper-bound order minus each sequential order."""
    return [(a, b) for a in order_specs.bounds(orders) for b in order_specs.sequential(orders)]


def _paired_cells(values: dict[str, np.ndarray], pairs: list[tuple[str, str]]) -> dict[str, np.ndarray]:
    """``values`` and, for each (a, b) of ``pairs``, ``paired/<a>-<b>/sum/<trained_to>/<stage>``: a's
    summed cell minus b's, on the same replicate (so its interval is the paired one)."""
    out = dict(values)
    for a, b in pairs:
        for name, v in values.items():
            if name.startswith(f"cell/{a}/sum/"):
                other = values.get(name.replace(f"cell/{a}/", f"cell/{b}/", 1))
                if other is not None:
                    out[f"paired/{a}-{b}/sum/" + name.removeprefix(f"cell/{a}/sum/")] = v - other
    return out


def _trend(fd: pd.DataFrame) -> tuple[float | None, float | None]:
    """Spearman's rho of forgetting on out-degree and its two-sided p-value; neither with fewer
    than :data:`MIN_DEGREES` distinct out-degrees (no trend to read) or a constant forgetting."""
    from scipy.stats import spearmanr  # type: ignore[import-untyped]

    if fd["out_degree"].nunique() < MIN_DEGREES or fd["FGT"].nunique() < 2:
        return None, None
    got = spearmanr(fd["out_degree"], fd["FGT"])
    return float(got.statistic), float(got.pvalue)


def _num(v: Any) -> float | None:
    return None if v is None or pd.isna(v) else round(float(v), 4)


def _r6(v: float | None) -> float | None:
    return None if v is None else round(v, 6)
