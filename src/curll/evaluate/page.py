"""The evaluation report as one self-contained HTML page (figures inlined as base64 PNG).

Top to bottom: what the numbers show (:func:`curll.evaluate.findings.summary`: sentences made
from the values and their intervals), every test made, the CL metrics at the last stage for the
judge scores and the losses (``value [lo, hi]``), the figures one family a section
(:data:`curll.evaluate.report_figures.FAMILIES`: every order's figure of a family side by side,
on one colour scale) with their captions, the tables (matrix cells as ``value [lo, hi] (n=k)``),
and the judges' parse failures, agreement and controls. Cells are formatted by kind
(:mod:`curll.evaluate.report_tables`): counts as integers, other numbers with two decimals, an
undefined value as an en dash, never "None" or "nan".
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from curll import orders
from curll.artifacts import atomic_path
from curll.evaluate.findings import summary
from curll.evaluate.headline import COLUMNS, UNITS, Headline, Identity, rows
from curll.evaluate.report import Report
from curll.evaluate.report_figures import NO_CLAIM, heading, seeds_said
from curll.evaluate.report_tables import claims_table, judge_tables, render, summary_table
from curll.schemas.evaluate import UNTRAINED

STYLE = (
    "body{font-family:sans-serif;max-width:1800px;margin:2em auto;padding:0 1em}"
    "table{border-collapse:collapse;font-size:13px;margin-bottom:1em}"
    "td,th{border:1px solid #ccc;padding:2px 6px}td.num{text-align:right;white-space:nowrap}"
    ".family{display:grid;grid-template-columns:repeat(auto-fill,minmax(600px,1fr));gap:1em 2em}"
    "figure{margin:0}figure img{width:100%}figcaption{font-size:13px;color:#333}"
)


def family(name: str) -> str:
    """The family of a figure name: the part after ``<order>: ``, or the whole name."""
    head, _, rest = name.partition(": ")
    return rest if rest and head in (*orders.names(), UNTRAINED) else name


def figures(rep: Report) -> list[str]:
    """One section a family, in the order first drawn; a family's figures in the orders' order."""
    names = orders.names()
    rank = {o: i for i, o in enumerate(names)}
    groups: dict[str, list[str]] = {}
    for name in rep.figures:
        groups.setdefault(family(name), []).append(name)
    parts = []
    for fam, group in groups.items():
        parts.append(f"<h3>{html.escape(heading(fam))}</h3><div class='family'>")
        for name in sorted(group, key=lambda n: rank.get(n.partition(":")[0], len(names))):
            data = base64.b64encode(rep.figures[name].read_bytes()).decode()
            caption = rep.captions.get(name, name)
            parts.append(f'<figure><img alt="{html.escape(name)}" src="data:image/png;base64,{data}">'
                         f"<figcaption>{html.escape(caption)}</figcaption></figure>")  # fmt: skip
        parts.append("</div>")
    return parts


def header(head: Headline, ident: Identity) -> list[str]:
    """The page's opening: the run's identity and the headline table (the table ``curll
    results`` prints, from :func:`curll.evaluate.headline.rows`), the baseline gate's and the
    judge's verdicts."""
    cells = "".join(f"<th>{html.escape(c).replace(chr(10), '<br>')}</th>" for c in COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows(head))
    verdicts = [f"<p>{html.escape(line)}</p>" for line in (head.gate_line(), head.judge_line()) if line]
    return [f"<p class='identity'>{html.escape(ident.line())}</p>",
            f"<table><tr>{cells}</tr>{body}</table>", f"<p>{html.escape(UNITS)}</p>", *verdicts]  # fmt: skip


def judge_scope(metrics: dict[str, Any]) -> str:
    """Whose answers the judge scores cover, against the loss's seeds, and how many answers were
    scored without a judge (no usable answer: the lowest rating)."""
    seeds = metrics.get("bootstrap", {}).get("seeds", {})
    said = f"Judge scores: answers of {seeds_said(seeds['judge'])}" if seeds.get("judge") else "Judge scores"
    if seeds.get("loss") and seeds.get("loss") != seeds.get("judge"):
        said += f" (evaluate.judge_seeds; the loss: {seeds_said(seeds['loss'])})"
    none = metrics.get("no_answer", {})
    if none.get("total"):
        said += (f". {none['total']} of the {none['answers']} scores (an item and a model each) rest on "
                 f"no usable answer (blank or looping) and are {none['score']:g}, the lowest rating, "
                 f"given without a judge")  # fmt: skip
    return said + "."


def write_html(
    rep: Report, judges: dict[str, Any], path: Path, title: str,
    headline: tuple[Headline, Identity] | None = None,
) -> None:  # fmt: skip
    """The page at ``path``; with ``headline``, :func:`header` opens it."""
    said = summary(rep.metrics)
    judged = rep.informative
    parts = [f"<h1>{html.escape(title)}</h1>", *(header(*headline) if headline else []),
             f"<p><b>{html.escape(said[0])}</b></p>",
             "<h2>What the numbers show</h2><p>A claim below is a test that holds after Holm's "
             "correction; the compute and judge lines describe the run.</p>",
             "<ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in said[1:]) + "</ul>",
             *claims_table(rep.metrics),
             "<h2>Continual-learning metrics (last stage) [95% interval]</h2><h3>Judge scores</h3>",
             f"<p>{html.escape(judge_scope(rep.metrics))}</p>", *([] if judged else [f"<p>{NO_CLAIM}</p>"]),
             render(summary_table(rep.metrics["orders"]))]  # fmt: skip
    if "loss" in rep.metrics:
        parts += ["<h3>Loss (nats per answer token)</h3>", render(summary_table(rep.metrics["loss"]))]
    parts += ["<h2>Figures</h2>", *figures(rep), "<h2>Tables</h2>"]
    for name, table in rep.tables.items():
        warn = [f"<p>{NO_CLAIM}</p>"] if name in rep.judged and not judged else []
        parts += [f"<h3>{html.escape(name)}</h3>", *warn, render(table)]
    parts += ["<h2>Judges</h2>", *judge_tables(judges)]
    head = f"<meta charset='utf-8'><title>{html.escape(title)}</title><style>{STYLE}</style>"
    doc = f"<!doctype html><html><head>{head}</head><body>{''.join(parts)}</body></html>"
    with atomic_path(path) as tmp:
        tmp.write_text(doc, encoding="utf-8")
