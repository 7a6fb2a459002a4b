"""Skill taxonomy: stage -> skill -> sub-skill -> goal -> indicator.

Public API::

    got = import_taxonomy("curll-csv", ["age_0_5.csv", "age_5_11.csv"], stages=[0, 1, 2, 3, 4])
    got.table          # follows :class:`curll.schemas.IndicatorSchema`
    got.dropped        # repeats left out under duplicates="drop" (:class:`Duplicate`)
    stats = taxonomy_stats(got.table, got.dropped)   # {"stages": {"0": {"skills": 7, ...}}, ...}

Layouts: ``curll-yaml`` (ours), ``curll-csv`` (the CurLL authors' spreadsheets) and ``table``
(your own CSV, its columns and grades named by a :class:`TableLayout`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pandas as pd

from curll.artifacts import validate, write_table_and_stats
from curll.draws import bottom_k
from curll.errors import CurllError
from curll.schemas import IndicatorSchema
from curll.taxonomy.curll_csv import read_curll_csvs
from curll.taxonomy.curll_yaml import read_curll_yamls
from curll.taxonomy.model import (
    Duplicate,
    DuplicatePolicy,
    IndicatorRecord,
    build_table,
    indicator_id,
    taxonomy_stats,
)
from curll.taxonomy.table import TableLayout, read_tables

Reader = Callable[[Sequence[str | Path]], Iterator[IndicatorRecord]]

#: layout name -> reader; ``curll-yaml`` is our own layout (the built-in taxonomy),
#: ``curll-csv`` the CurLL authors' published spreadsheets; ``table`` needs a TableLayout
LAYOUTS: dict[str, Reader] = {"curll-csv": read_curll_csvs, "curll-yaml": read_curll_yamls}
TABLE = "table"


@dataclass(frozen=True)
class Imported:
    """What :func:`import_taxonomy` read: the table, and the repeats it left out."""

    table: pd.DataFrame
    dropped: list[Duplicate]


def import_taxonomy(
    layout: str,
    inputs: Sequence[str | Path],
    stages: Iterable[int] | None = None,
    *,
    duplicates: DuplicatePolicy = "error",
    columns: TableLayout | None = None,
) -> Imported:
    """Read ``inputs`` in ``layout`` into a validated indicators table.

    ``stages`` keeps only those stages (None keeps all found); a requested stage with no
    indicator is an error. ``duplicates`` says what a repeated indicator does (see
    :func:`build_table`). ``columns`` is required by the ``table`` layout and refused by the others.
    """
    if layout == TABLE:
        if columns is None:
            raise CurllError("the table layout needs its columns and grades named", field="columns")
        reader: Reader = partial(read_tables, layout=columns)
    elif layout in LAYOUTS:
        if columns is not None:
            raise CurllError(f"columns are for the table layout, not {layout!r}", field="columns")
        reader = LAYOUTS[layout]
    else:
        raise CurllError(
            f"unknown taxonomy layout {layout!r}; choose one of {sorted([*LAYOUTS, TABLE])}", field="layout"
        )
    if not inputs:
        raise CurllError("no input files given", field="inputs")
    source = ", ".join(str(p) for p in inputs)
    df, dropped = build_table(reader(inputs), stages, duplicates, source=source)
    return Imported(validate(df, IndicatorSchema, source=source), dropped)


def sample_per_stage(df: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """At most ``n`` indicators per stage (0: all), in the table's order: a
    :func:`curll.draws.bottom_k` draw of their ``indicator_id``, so it depends on the seed and
    the indicators, not on the order of the rows; adding an indicator to a stage changes at
    most one of its picks."""
    if n <= 0:
        return df
    return df[bottom_k(df, n, seed, key="indicator_id", by=["stage"])].reset_index(drop=True)


def save_taxonomy(
    df: pd.DataFrame, indicators_path: str | Path, stats_path: str | Path, dropped: Iterable[Duplicate] = ()
) -> dict[str, object]:
    """Write ``indicators.parquet`` (validated, atomic) and its stats JSON (counting the
    repeats ``dropped``); return the stats."""
    return write_table_and_stats(
        df, indicators_path, IndicatorSchema, stats_path, taxonomy_stats(df, dropped)
    )


__all__ = [
    "LAYOUTS",
    "TABLE",
    "Duplicate",
    "DuplicatePolicy",
    "Imported",
    "IndicatorRecord",
    "TableLayout",
    "import_taxonomy",
    "indicator_id",
    "sample_per_stage",
    "save_taxonomy",
    "taxonomy_stats",
]
