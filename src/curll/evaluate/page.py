"""The evaluation report as one self-contained HTML page (figures inlined as base64 PNG).

Top to bottom: what the numbers show (:func:`curll.evaluate.findings.findings`: sentences made
from the values and their intervals), the CL metrics at the last stage for the judge scores and
the losses (``value [lo, hi]``), the figures with each order's judge and loss heatmaps side by
side, the tables (cells as ``value [lo, hi] (n=k)``), and the judges' parse failures and
agreement. An undefined value shows as "-", never "nan".
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

import pandas as pd

from curll.artifacts import atomic_path
from curll.evaluate.findings import summary
from curll.evaluate.report import Report
from curll.schemas.evaluate import ORDERS


def summary_table(section: dict[str, Any]) -> pd.DataFrame:
    """One row per order and type; a metric with bounds as ``value [lo, hi]``, "-" where undefined."""
    rows = []
    for order, kinds in section.items():
        for kind, vals in kinds.items():
            row: dict[str, Any] = {"order": order, "type": kind}
            for m, v in vals.items():
                if m == "T" or m.endswith(("_lo", "_hi")):
                    continue
                lo, hi = vals.get(f"{m}_lo"), vals.get(f"{m}_hi")
                if isinstance(v, list):
                    row[m] = ", ".join(map(str, v)) or "none"
                elif v is None:
                    row[m] = "-"
                else:
                    row[m] = f"{v:.3f}" + (
                        f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else ""
                    )
            rows.append(row)
    return pd.DataFrame(rows).fillna("-")


def _claims_table(metrics: dict[str, Any]) -> list[str]:
    """Every test made, held or not: value, interval, p and Holm-adjusted p."""
    listed = metrics.get("claims", {}).get("list", [])
    if not listed:
        return []
    table = pd.DataFrame(listed)[["family", "key", "value", "lo", "hi", "p", "p_holm", "holds"]]
    for col in ("value", "lo", "hi", "p", "p_holm"):  # None (not tested, no interval) shows as "-"
        table[col] = pd.to_numeric(table[col], errors="coerce")
    return ["<h3>Every test made (95% intervals; two-sided p; Holm within each family, the curriculum "
            "family tested only when every order beats the unigram baseline)</h3>",
            table.to_html(index=False, na_rep="-", float_format=lambda v: f"{v:.3g}")]  # fmt: skip


def _span(v: dict[str, Any] | None) -> str:
    if not v or v.get("value") is None:
        return "-"
    lo, hi = v.get("lo"), v.get("hi")
    return f"{v['value']:.3f}" + (f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else "")


def _f(v: float) -> str:
    return f"{v:.3f}"


def write_html(rep: Report, judges: dict[str, Any], path: Path, title: str) -> None:
    said = summary(rep.metrics)
    parts = [f"<h1>{html.escape(title)}</h1>", f"<p><b>{html.escape(said[0])}</b></p>",
             "<h2>What the numbers show (claims that survive Holm's correction)</h2>",
             "<ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in said[1:]) + "</ul>",
             *_claims_table(rep.metrics),
             "<h2>Continual-learning metrics (last stage) [95% interval]</h2><h3>Judge scores</h3>",
             summary_table(rep.metrics["orders"]).to_html(index=False, na_rep="-")]  # fmt: skip
    if "loss" in rep.metrics:
        parts += [
            "<h3>Loss (nats per answer token)</h3>",
            summary_table(rep.metrics["loss"]).to_html(index=False),
        ]
    parts.append("<h2>Figures</h2>")
    rank = {o: i for i, o in enumerate(ORDERS)}
    by_order = sorted(rep.figures.items(), key=lambda kv: rank.get(kv[0].split(":")[0], len(ORDERS)))
    for name, fig in by_order:  # each order's judge and loss heatmaps side by side
        data = base64.b64encode(fig.read_bytes()).decode()
        parts.append(f'<figure><img alt="{html.escape(name)}" src="data:image/png;base64,{data}">'
                     f"<figcaption>{html.escape(name)}</figcaption></figure>")  # fmt: skip
    parts.append("<h2>Tables</h2>")
    for name, table in rep.tables.items():
        parts += [f"<h3>{html.escape(name)}</h3>", table.to_html(na_rep="", float_format=_f)]
    parts += ["<h2>Judges</h2>", pd.DataFrame(judges["judges"]).T.to_html(na_rep="")]
    if judges["agreement"]:
        parts.append(pd.DataFrame(judges["agreement"]).T.to_html(na_rep=""))
    if judges.get("controls"):
        rows = {j: {"informative": c.get("informative"), "why": c.get("why"),
                    **{f"reference beats {k.removeprefix('reference_beats_')}": _span(c.get(k))
                       for k in (f"reference_beats_{c}" for c in ("mismatch", "empty", "shuffled"))},
                    **{f"mean rating: {k}": v for k, v in (c.get("means") or {}).items()}}
                for j, c in judges["controls"].items()}  # fmt: skip
        parts += ["<h3>Judge controls (share of items where the reference is rated higher; ties: half)</h3>",
                  pd.DataFrame(rows).T.to_html(na_rep="-")]  # fmt: skip
    style = (
        "body{font-family:sans-serif;max-width:1800px;margin:2em auto}table{border-collapse:collapse;"
        "font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}"
        "figure{display:inline-block;width:48%;margin:0 1% 1em 0;vertical-align:top}figure img{width:100%}"
    )
    head = f"<meta charset='utf-8'><title>{html.escape(title)}</title><style>{style}</style>"
    doc = f"<!doctype html><html><head>{head}</head><body>{''.join(parts)}</body></html>"
    with atomic_path(path) as tmp:
        tmp.write_text(doc, encoding="utf-8")
