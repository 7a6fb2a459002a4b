"""Skill taxonomy: stage -> skill -> sub-skill -> goal -> indicator.

Public API::

    df = import_taxonomy("curll-csv", ["age_0_5.csv", "age_5_11.csv"], stages=[0, 1, 2, 3, 4])
    stats = taxonomy_stats(df)   # {"stages": {"0": {"skills": 7, ...}}}

``df`` follows :class:`curll.schemas.IndicatorSchema`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import pandas as pd

from curll.artifacts import validate, write_json, write_table
from curll.errors import CurllError
from curll.schemas import IndicatorSchema
from curll.taxonomy.curll_csv import read_curll_csvs
from curll.taxonomy.curll_yaml import read_curll_yamls
from curll.taxonomy.model import IndicatorRecord, age_group, build_table, indicator_id, taxonomy_stats

Reader = Callable[[Sequence[str | Path]], Iterator[IndicatorRecord]]

#: layout name -> reader; ``curll-yaml`` is our own layout (the built-in taxonomy),
#: ``curll-csv`` the CurLL authors' published spreadsheets
LAYOUTS: dict[str, Reader] = {"curll-csv": read_curll_csvs, "curll-yaml": read_curll_yamls}


def import_taxonomy(
    layout: str, inputs: Sequence[str | Path], stages: Iterable[int] | None = None
) -> pd.DataFrame:
    """Read ``inputs`` in ``layout`` into a validated indicators table.

    ``stages`` keeps only those stages (None keeps all found); a requested stage with no
    indicator is an error.
    """
    if layout not in LAYOUTS:
        raise CurllError(
            f"unknown taxonomy layout {layout!r}; choose one of {sorted(LAYOUTS)}", field="layout"
        )
    if not inputs:
        raise CurllError("no input files given", field="inputs")
    df = build_table(LAYOUTS[layout](inputs), stages)
    return validate(df, IndicatorSchema, source=", ".join(str(p) for p in inputs))


def sample_per_stage(df: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """At most ``n`` indicators per stage: a seeded sample that keeps the table's order (0: all).

    The draw depends only on the seed, the stage and that stage's indicator ids, so it is
    the same on every run and machine."""
    if n <= 0:
        return df
    keep: list[int] = []
    for stage, group in df.groupby("stage", sort=True):
        picked = group.sample(n=min(n, len(group)), random_state=seed + int(str(stage)))
        keep.extend(picked.index)
    return df.loc[sorted(keep)].reset_index(drop=True)


def save_taxonomy(df: pd.DataFrame, indicators_path: str | Path, stats_path: str | Path) -> dict[str, object]:
    """Write ``indicators.parquet`` (validated, atomic) and its stats JSON; return the stats."""
    stats = taxonomy_stats(df)
    write_table(df, indicators_path, IndicatorSchema)
    write_json(stats_path, stats)
    return dict(stats)


__all__ = [
    "LAYOUTS",
    "IndicatorRecord",
    "age_group",
    "import_taxonomy",
    "indicator_id",
    "sample_per_stage",
    "save_taxonomy",
    "taxonomy_stats",
]
