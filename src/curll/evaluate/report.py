"""The ``evaluate`` stage's files, rendered from one :class:`~curll.evaluate.results.Results`.

:func:`render` writes, from results computed once (:func:`curll.evaluate.results.compute`):
every matrix as CSV in the ``curll metrics cl`` layout with its counts and interval matrices
(``<stem>.csv``, ``_n``, ``_lo``, ``_hi``), the per-group tables (``<order>_by_<level>.csv``),
``details.json`` beside the matrices, and the figures (:mod:`curll.evaluate.report_figures`,
each with its caption); it returns the :class:`Report` that
:func:`curll.evaluate.page.write_html` lays out as the HTML page. :func:`build` is both steps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from curll.artifacts import atomic_path
from curll.evaluate import report_figures
from curll.evaluate.cl import write_matrix
from curll.evaluate.report_figures import Cells, Figure
from curll.evaluate.results import Results, compute


@dataclass
class Report:
    metrics: dict[str, Any]
    details: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    judged: set[str] = field(default_factory=set)  # the names of the tables of judge scores
    informative: bool = True  # the judge panel passed its controls
    figures: dict[str, Path] = field(default_factory=dict)
    captions: dict[str, str] = field(default_factory=dict)  # figure name -> what it shows

    def add(self, figures: dict[str, Figure]) -> None:
        for name, (path, caption) in figures.items():
            self.figures[name], self.captions[name] = path, caption


def render(res: Results, matrices: Path, figs: Path) -> Report:
    """The matrices, per-group tables and details under ``matrices``, the figures under ``figs``
    (see the module docstring); the report's metrics, tables and figures."""
    for stem, cells in res.matrices.items():
        write_cells(cells, matrices / stem)
    for name, table in res.levels.items():
        with atomic_path(matrices / name) as tmp:
            table.to_csv(tmp, index=False)
    rep = Report(res.metrics, res.details, res.tables, res.judged, res.informative)
    seeds = res.metrics.get("bootstrap", {}).get("seeds", {}).get("judge", [])
    rep.add(report_figures.judge_sums(res.sums, res.kinds, figs, informative=res.informative, seeds=seeds))
    if "loss" in res.metrics:
        rep.add(report_figures.loss_maps(res.loss, res.gains, figs))
    for a, b, cells in res.differences:
        rep.add(report_figures.difference(cells, a, b, figs, informative=res.informative))
    if res.degree is not None:
        order, fd, rho = res.degree
        rep.add(report_figures.degree(fd, rho, order, figs, informative=res.informative))
    with atomic_path(matrices / "details.json") as tmp:
        tmp.write_text(json.dumps(res.details, indent=2, sort_keys=True), encoding="utf-8")
    return rep


def write_cells(cells: Cells, stem: Path) -> None:
    """``<stem>.csv`` (the matrix), ``<stem>_n.csv`` (its counts) and, with an interval,
    ``<stem>_lo.csv`` and ``<stem>_hi.csv``."""
    write_matrix(cells.values, stem.with_name(stem.name + ".csv"))
    write_matrix(cells.n, stem.with_name(stem.name + "_n.csv"))
    if cells.lo is not None and cells.hi is not None:
        write_matrix(cells.lo, stem.with_name(stem.name + "_lo.csv"))
        write_matrix(cells.hi, stem.with_name(stem.name + "_hi.csv"))


def build(
    scores: pd.DataFrame,
    items: pd.DataFrame,
    degree: pd.Series,
    kinds: list[str],
    matrices: Path,
    figs: Path,
    **options: Any,
) -> Report:
    """:func:`render` of :func:`~curll.evaluate.results.compute` (``options``: its keywords)."""
    return render(compute(scores, items, degree, kinds, **options), matrices, figs)
