"""The report's tables as HTML, every cell formatted by the kind of its value.

An integer (a count) shows as an integer, never ``476.0``; any other number with two decimals
(means, sums of means, differences and their bounds: the data hold no third); a p-value with
three significant digits; a rate as a percentage; a flag as yes / no; an undefined value (None,
NaN) as an en dash, never "None" or "nan". A table's index becomes its first column (dropped when
it only numbers the rows), so no header row is left empty.
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from curll.evaluate.findings import verdict
from curll.evaluate.headline import DASH, fmt, two

Format = Callable[[Any], str]


def cell(v: Any) -> str:
    """One value by its kind: see the module docstring."""
    if v is None or v is pd.NA or v is pd.NaT:
        return DASH
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return DASH if math.isnan(float(v)) else two(float(v))
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v)) or "none"
    return str(v)


def p_value(v: Any) -> str:
    return DASH if v is None or pd.isna(v) else f"{float(v):.3g}"


def percent(v: Any) -> str:
    return DASH if v is None or pd.isna(v) else f"{float(v):.1%}"


def span(value: Any, lo: Any = None, hi: Any = None) -> str:
    """``value [lo, hi]`` with two decimals (:func:`curll.evaluate.headline.fmt`)."""
    return fmt((_num(value), _num(lo), _num(hi)))


def _num(v: Any) -> float | None:
    return None if v is None or pd.isna(v) else float(v)


def render(table: pd.DataFrame, formats: Mapping[str, Format] | None = None) -> str:
    """``table`` as an HTML table: cells by :func:`cell` (``formats``: column -> its own format),
    the index as the first column(s), row headers (``<index name> \\ <columns name>`` when both
    are named), unless it is a plain row number."""
    t = table.copy()
    labels = 0  # the index's columns: row headers
    if isinstance(t.index, pd.RangeIndex) and not any(t.index.names):
        t = t.reset_index(drop=True)
    else:
        names = [str(n) if n is not None else "" for n in t.index.names]
        if t.columns.name and len(names) == 1:
            names = [f"{names[0]} \\ {t.columns.name}"]
        t.index = t.index.set_names(names)
        labels, t = len(names), t.reset_index()
    t.columns = [str(c) for c in t.columns]
    rows = []
    for record in t.astype(object).itertuples(index=False):
        cells = [(formats or {}).get(c, cell)(v) for c, v in zip(t.columns, record, strict=True)]
        heads = "".join(f"<th>{html.escape(x)}</th>" for x in cells[:labels])
        rows.append("<tr>" + heads + "".join(_td(x) for x in cells[labels:]) + "</tr>")
    head = "<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in t.columns) + "</tr>"
    return f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"


def _td(text: str) -> str:
    """A cell; numbers (and the dash of an undefined one) right-aligned."""
    number = text == DASH or text[:1].isdigit() or (text[:1] == "-" and text[1:2].isdigit())
    return f"<td class='num'>{html.escape(text)}</td>" if number else f"<td>{html.escape(text)}</td>"


def with_n(
    j: pd.DataFrame, n: pd.DataFrame, lo: pd.DataFrame | None = None, hi: pd.DataFrame | None = None
) -> pd.DataFrame:
    """A matrix's cells as text, ``3.25 [2.90, 3.60] (n=4)``; an empty cell as :data:`DASH` ``(n=0)``; rows
    "trained up to stage", columns "test stage"."""
    counts = n.reindex_like(j).fillna(0).to_numpy(dtype=int)
    values = j.to_numpy(dtype=float)
    low = lo.reindex_like(j).to_numpy(dtype=float) if lo is not None else np.full(values.shape, np.nan)
    high = hi.reindex_like(j).to_numpy(dtype=float) if hi is not None else np.full(values.shape, np.nan)
    rows, cols = values.shape
    cells = [[f"{span(values[r, c], low[r, c], high[r, c])} (n={counts[r, c]})" for c in range(cols)]
             for r in range(rows)]  # fmt: skip
    text = pd.DataFrame(cells, index=j.index, columns=j.columns)
    return text.rename_axis(index="trained up to stage", columns="test stage")


def summary_table(section: dict[str, Any]) -> pd.DataFrame:
    """One row per order and type; a metric with bounds as ``value [lo, hi]``."""
    rows = []
    for order, kinds in section.items():
        for kind, vals in kinds.items():
            row: dict[str, Any] = {"order": order, "type": kind}
            for m, v in vals.items():
                if m == "T" or m.endswith(("_lo", "_hi")):
                    continue
                row[m] = v if isinstance(v, list) else span(v, vals.get(f"{m}_lo"), vals.get(f"{m}_hi"))
            rows.append(row)
    return pd.DataFrame(rows)


def claims_table(metrics: dict[str, Any]) -> list[str]:
    """Every test made, held or not: its key, what it measures, value, interval, p and adjusted p
    (Holm; the gate's: p)."""
    listed = metrics.get("claims", {}).get("list", [])
    if not listed:
        return []
    table = pd.DataFrame(listed)[["family", "key", "what", "value", "lo", "hi", "p", "p_holm"]]
    table["holds"] = [verdict(c) for c in listed]
    table = table.rename(columns={"p_holm": "adjusted p"})
    return ["<h3>Every test made</h3>",
            "<p>95% intervals; two-sided p. Baseline: one test per trained model, each alone and not "
            "adjusted; the gate's one claim is that every model beats the unigram baseline. Only then "
            "are the curriculum tests made, Holm-adjusted over all of them; otherwise they are listed "
            "as not tested.</p>",
            render(table, {"p": p_value, "adjusted p": p_value})]  # fmt: skip


def judge_tables(judges: dict[str, Any]) -> list[str]:
    """The judges' answers and parse failures, their agreement, and their controls."""
    parts = [render(_by_name(judges["judges"], "judge"), {"parse_failure_rate": percent})]
    if judges.get("agreement"):
        parts.append(render(_by_name(judges["agreement"], "judges"), {"exact": percent}))
    if judges.get("controls"):
        rows = {j: {"informative": c.get("informative"), "why": c.get("why"),
                    **{f"reference beats {k}": span(*_bounds(c.get(f"reference_beats_{k}")))
                       for k in ("mismatch", "empty", "shuffled")},
                    **{f"mean rating: {k}": v for k, v in (c.get("means") or {}).items()}}
                for j, c in judges["controls"].items()}  # fmt: skip
        parts += ["<h3>Judge controls (share of items where the reference is rated higher; ties: half)</h3>",
                  render(_by_name(rows, "judge"))]  # fmt: skip
    return parts


def _by_name(rows: Mapping[str, Mapping[str, Any]], name: str) -> pd.DataFrame:
    """One row per key of ``rows``, the key as column ``name``; integers stay integers."""
    return pd.DataFrame.from_dict(dict(rows), orient="index", dtype=object).rename_axis(name)


def _bounds(v: Mapping[str, Any] | None) -> tuple[Any, Any, Any]:
    return (None, None, None) if not v else (v.get("value"), v.get("lo"), v.get("hi"))
