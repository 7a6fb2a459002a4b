"""DVC stage ``taxonomy``: the indicator table the whole pipeline is keyed on.

Reads ``params.taxonomy`` (layout, input, stages, ``duplicates``, the ``table`` layout's
``columns`` and ``grades``, and ``per_stage``: a seeded sample of at most that many
indicators per stage, for small runs); writes ``out.indicators``
(:class:`curll.schemas.IndicatorSchema`) and ``out.stats`` (per-stage counts and the repeats
dropped, a DVC metric). Each repeat dropped is named on stderr.
"""

from __future__ import annotations

from curll.config import Params
from curll.config.data import TaxonomyParams
from curll.errors import fields_named
from curll.taxonomy import Imported, TableLayout, import_taxonomy, sample_per_stage, save_taxonomy
from pipeline.tools.console import say


def run(params: Params) -> None:
    p = params.taxonomy
    with fields_named({"stages": "taxonomy.stages"}):
        got = import_taxonomy(
            p.layout, [p.input], stages=p.stages, duplicates=p.duplicates, columns=table_layout(p)
        )
    report_dropped(got)
    df = sample_per_stage(got.table, p.per_stage, p.seed)
    save_taxonomy(df, p.out.indicators, p.out.stats, got.dropped)
    say(f"taxonomy: {len(df)} indicators in stages {list(p.stages)} -> {p.out.indicators}")


def table_layout(p: TaxonomyParams) -> TableLayout | None:
    """The ``table`` layout's columns and grades from params; None for the other layouts."""
    if p.columns is None or p.grades is None:
        return None
    return TableLayout(grades=p.grades, **p.columns.model_dump())


def report_dropped(got: Imported) -> None:
    """Name every repeat the import left out (``duplicates: drop``)."""
    for repeat in got.dropped:
        say(f"warning: {repeat.describe()}")
    if got.dropped:
        say(f"taxonomy: {len(got.dropped)} repeated indicator(s) dropped (taxonomy.duplicates: drop)")
