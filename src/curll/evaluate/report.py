"""Everything the ``evaluate`` stage writes from the scores: matrices, metrics, figures, report.

:func:`build` computes, for the orders present in ``scores``: stage x stage matrices per type
and summed (CSV in the ``curll metrics cl`` layout), CL metrics per order and type, joint
minus continual maps, AP/FGT/BWT/FWT per skill, sub-skill and indicator (CSV
``<order>_by_<level>.csv`` beside the matrices), forgetting against
out-degree, and the readability (Flesch-Kincaid grade) of answers per test stage next to
that of the reference answers. :func:`write_html` makes one self-contained HTML file
(figures inlined as base64 PNG).
"""

from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from curll.artifacts import atomic_path
from curll.evaluate import analysis, plots
from curll.evaluate.cl import write_matrix
from curll.evaluate.judge import NO_ANSWER_SCORE, unanswered
from curll.evaluate.loss import loss_matrix, loss_metrics


@dataclass
class Report:
    metrics: dict[str, Any]
    details: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, Path] = field(default_factory=dict)


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


def build(
    scores: pd.DataFrame,
    items: pd.DataFrame,
    degree: pd.Series,
    kinds: list[str],
    matrices: Path,
    figs: Path,
    *,
    answers: pd.DataFrame | None = None,
    rubric: pd.DataFrame | None = None,
    losses: pd.DataFrame | None = None,
) -> Report:
    orders = [o for o in analysis.ORDERS if o in set(scores["order"])]
    full = analysis.order_metrics(scores, [*kinds, "sum"])
    # metrics.json keeps the values at the last stage (columns of `dvc exp show`); the per-stage
    # series and the per-stage readability go to matrices/details.json
    finals = {o: {k: {m: v for m, v in vals.items() if m != "series"} for k, vals in by_kind.items()}
              for o, by_kind in full.items()}  # fmt: skip
    rep = Report(metrics={"orders": finals})
    rep.metrics["no_answer"] = {  # blank or looping answers: scored NO_ANSWER_SCORE, counted
        "score": NO_ANSWER_SCORE,
        "total": int(scores["no_answer"].sum()),
        "answers": len(scores),
        "by_run": {str(k): int(v) for k, v in scores.groupby("run")["no_answer"].sum().items() if v},
    }
    if answers is not None:  # other rejects (backend errors): missing scores, counted
        missed = {r: k for r, k in unanswered(answers).items() if k}
        rep.metrics["unanswered"] = {"total": sum(missed.values()), "answers": len(answers), "by_run": missed}
    rep.details["series"] = {
        o: {k: vals["series"] for k, vals in kinds_.items()} for o, kinds_ in full.items()
    }
    for order in orders:
        for kind in [*kinds, "sum"]:
            j, n = analysis.matrix(scores, order, kind), analysis.matrix(scores, order, kind, value="n")
            write_matrix(j, matrices / f"{order}_{kind}.csv")
            write_matrix(n, matrices / f"{order}_{kind}_n.csv")
            if kind == "sum":
                rep.tables[f"{order}: summed scores (n: scores per cell, fewest of any type)"] = _with_n(j, n)
                rep.figures[f"{order}: summed scores"] = plots.heatmap(
                    j, f"{order}: sum of {'+'.join(kinds)}", figs / f"heatmap_{order}.png", n=n
                )
    if losses is not None:
        _loss_section(rep, losses, kinds, matrices, figs)
    if {"joint", "continual"} <= set(orders):
        diff = analysis.matrix(scores, "joint") - analysis.matrix(scores, "continual")
        write_matrix(diff, matrices / "joint_minus_continual_sum.csv")
        rep.figures["joint - continual"] = plots.heatmap(
            diff, "joint - continual (sum)", figs / "joint_minus_continual.png", diverging=True
        )
    for order in orders:
        for level in ("skill", "subskill", "indicator_id"):
            table = analysis.group_metrics(scores, order, level).drop(columns="level")
            with atomic_path(matrices / f"{order}_by_{level.removesuffix('_id')}.csv") as tmp:
                table.to_csv(tmp, index=False)
            if level == "skill":
                rep.tables[f"{order}: per skill (last stage)"] = table
    if "continual" in orders:
        fd = analysis.forgetting_vs_degree(scores, degree)
        rho = fd.corr(method="spearman").iloc[0, 1] if len(fd) > 2 and fd.nunique().min() > 1 else None
        rep.metrics["forgetting_vs_out_degree"] = {"indicators": len(fd), "spearman": _num(rho)}
        rep.figures["forgetting vs out-degree"] = plots.scatter(
            fd["out_degree"],
            fd["FGT"],
            "continual: forgetting per indicator",
            figs / "forgetting_vs_out_degree.png",
        )
    if rubric is not None and answers is not None and len(rubric):
        by_stage = analysis.rubric_by_stage(rubric, answers, items)
        rep.tables["Rubric (grade-level fit) of each order's last model"] = by_stage
        rep.metrics["rubric"] = {
            str(o): {c: _num(v) for c, v in g.mean().items()} for o, g in by_stage.groupby(level=0)
        }
    read = readability(scores[scores["order"] != "untrained"], items)
    rep.tables["Flesch-Kincaid grade of answers by test stage"] = read
    rep.details["readability"] = {c: {str(k): _num(v) for k, v in read[c].items()} for c in read.columns}
    rep.metrics["readability_grade"] = {c: _num(read[c].mean()) for c in read.columns}
    with atomic_path(matrices / "details.json") as tmp:
        tmp.write_text(json.dumps(rep.details, indent=2, sort_keys=True), encoding="utf-8")
    return rep


def _loss_section(rep: Report, losses: pd.DataFrame, kinds: list[str], matrices: Path, figs: Path) -> None:
    """Loss matrices of the test split (CSV with their n, heatmaps, a table per order) and their
    CL metrics (``metrics.loss``: finals; ``details.loss_series``: per stage)."""
    test = losses[losses["split"] == "test"]
    full = loss_metrics(test, [*kinds, "all"])
    rep.metrics["loss"] = {o: {k: {m: v for m, v in vals.items() if m != "series"} for k, vals in by.items()}
                           for o, by in full.items()}  # fmt: skip
    rep.details["loss_series"] = {o: {k: vals["series"] for k, vals in by.items()} for o, by in full.items()}
    for order in full:
        for kind in [*kinds, "all"]:
            j, n = loss_matrix(test, order, kind), loss_matrix(test, order, kind, value="n")
            write_matrix(j, matrices / f"loss_{order}_{kind}.csv")
            write_matrix(n, matrices / f"loss_{order}_{kind}_n.csv")
        j, n = loss_matrix(test, order, "all"), loss_matrix(test, order, "all", value="n")
        name = f"{order}: loss (nats per answer token, lower is better; n: records)"
        rep.tables[name] = _with_n(j, n)
        rep.figures[f"{order}: loss"] = plots.heatmap(
            j,
            f"{order}: NLL per answer token (all types)",
            figs / f"loss_heatmap_{order}.png",
            n=n,
            reverse=True,
        )


def _with_n(j: pd.DataFrame, n: pd.DataFrame) -> pd.DataFrame:
    """Cells as ``3.250 (n=4)``; an empty cell as ``- (n=0)``."""
    text = j.map(lambda v: "-" if pd.isna(v) else f"{v:.3f}")
    return text + n.reindex_like(j).fillna(0).astype(int).map(lambda k: f" (n={k})")


def _num(v: Any) -> float | None:
    return None if v is None or pd.isna(v) else round(float(v), 4)


def summary_table(metrics: dict[str, Any]) -> pd.DataFrame:
    rows = [{"order": o, "type": k, **{m: v for m, v in vals.items() if m != "T"}}
            for o, kinds in metrics["orders"].items() for k, vals in kinds.items()]  # fmt: skip
    return pd.DataFrame(rows)


def _f(v: float) -> str:
    return f"{v:.3f}"


def write_html(rep: Report, judges: dict[str, Any], path: Path, title: str) -> None:
    parts = [f"<h1>{html.escape(title)}</h1>", "<h2>Continual-learning metrics (last stage)</h2>",
             summary_table(rep.metrics).to_html(index=False, na_rep="", float_format=_f)]  # fmt: skip
    parts.append("<h2>Figures</h2>")
    for name, fig in rep.figures.items():
        data = base64.b64encode(fig.read_bytes()).decode()
        parts.append(f'<figure><img alt="{html.escape(name)}" src="data:image/png;base64,{data}">'
                     f"<figcaption>{html.escape(name)}</figcaption></figure>")  # fmt: skip
    parts.append("<h2>Tables</h2>")
    for name, table in rep.tables.items():
        parts += [f"<h3>{html.escape(name)}</h3>", table.to_html(na_rep="", float_format=_f)]
    parts += ["<h2>Judges</h2>", pd.DataFrame(judges["judges"]).T.to_html(na_rep="")]
    if judges["agreement"]:
        parts.append(pd.DataFrame(judges["agreement"]).T.to_html(na_rep=""))
    style = (
        "body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse;"
        "font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}figure{display:inline-block}"
    )
    head = f"<meta charset='utf-8'><title>{html.escape(title)}</title><style>{style}</style>"
    doc = f"<!doctype html><html><head>{head}</head><body>{''.join(parts)}</body></html>"
    with atomic_path(path) as tmp:
        tmp.write_text(doc, encoding="utf-8")
