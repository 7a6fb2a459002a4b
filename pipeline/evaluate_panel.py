"""DVC stage ``evaluate_panel``: every judge's ratings in one table, and how the judges agree.

Reads ``evaluate.out.panel/<judge>/`` of every judge of ``evaluate.judges``, in that order
(written by the ``evaluate_judge@<judge>`` stages), and ``evaluate.out.items``. Writes
``evaluate.out.ratings`` and ``evaluate.out.rubric`` (the judges' tables one after another) and
``evaluate.out.judges`` (per judge: parse-failure rate and mean rating; per pair of judges:
agreement; the yields per stage and judge). A judge's folder that is missing is an error
naming it; folders of judges no longer listed are not read.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from curll.artifacts import read_table, write_json, write_tables
from curll.config import Params
from curll.errors import CurllError
from curll.evaluate.judge import judge_tables, panel_stats, rating_yields
from curll.schemas.evaluate import ItemSchema, JudgeRatingSchema, RubricSchema
from curll.yields import public
from pipeline.report import say


def run(params: Params) -> None:
    p = params.evaluate
    items = read_table(p.out.items, ItemSchema, columns=["item_id", "stage"])
    tables = [judge_tables(p.out.panel, name) for name in p.judges]
    ratings = pd.concat([_rated(r, items) for r, _ in tables], ignore_index=True)
    rubric = pd.concat([read_table(s, RubricSchema) for _, s in tables], ignore_index=True)
    stats = {**panel_stats(ratings), "yields": public(rating_yields(ratings, items))}
    write_tables([(ratings, p.out.ratings, JudgeRatingSchema), (rubric, p.out.rubric, RubricSchema)])
    write_json(p.out.judges, stats)
    say(
        "evaluate_panel: "
        + ", ".join(f"{k} failures {v['parse_failure_rate']:.1%}" for k, v in stats["judges"].items())
    )


def _rated(path: Path, items: pd.DataFrame) -> pd.DataFrame:
    """One judge's ratings; rows of items not in ``items`` (a folder older than the items) are
    an error naming the file."""
    ratings = read_table(path, JudgeRatingSchema)
    unknown = sorted(set(ratings["item_id"]) - set(items["item_id"]))
    if unknown:
        raise CurllError(
            f"{len(unknown)} rated items are not in evaluate.out.items (e.g. {unknown[0]!r}): rerun it",
            file=path,
        )
    return ratings
