"""DVC stage ``evaluate_panel``: every judge's ratings in one table, and how the judges agree.

Reads ``evaluate.out.panel/<judge>/`` of every judge of ``evaluate.judges``, in that order
(written by the ``evaluate_judge@<judge>`` stages), and ``evaluate.out.items``. Writes
``evaluate.out.ratings`` and ``evaluate.out.rubric`` (the judges' tables one after another) and
``evaluate.out.judges`` (per judge: parse-failure rate and mean rating; per pair of judges:
agreement, on every (item, run, repeat) answer both rated; the yields per stage and judge;
and from each judge's ``controls.parquet``,
:func:`curll.evaluate.controls.judge_controls` under ``controls``, judge -> ``informative``
under ``informative``, ``panel_informative``: at least one judge is, and the judges' agreement
on the controls under ``controls_agreement``). The control intervals draw
``max(evaluate.bootstrap.samples, 2000)`` replicates with ``evaluate.bootstrap.seed``. A judge's
folder that is missing, or older than the controls (no ``controls.parquet``), is an error naming
the file; folders of judges no longer listed are not read.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from curll.artifacts import read_table, write_json, write_tables
from curll.config import Params
from curll.errors import CurllError
from curll.evaluate.controls import control_agreement, judge_controls
from curll.evaluate.judge import controls_table, judge_tables, panel_stats, rating_yields
from curll.schemas.evaluate import ControlRatingSchema, ItemSchema, JudgeRatingSchema, RubricSchema
from curll.yields import public
from pipeline.tools.console import say

#: the least bootstrap replicates of the control intervals (``evaluate.bootstrap.samples`` if more)
MIN_CONTROL_SAMPLES = 2000


def run(params: Params) -> None:
    p = params.evaluate
    items = read_table(p.out.items, ItemSchema, columns=["item_id", "stage"])
    tables = [judge_tables(p.out.panel, name) for name in p.judges]
    ratings = pd.concat([_rated(r, items) for r, _ in tables], ignore_index=True)
    rubric = pd.concat([read_table(s, RubricSchema) for _, s in tables], ignore_index=True)
    controls = pd.concat([_controls(p.out.panel, name) for name in p.judges], ignore_index=True)
    samples = max(p.bootstrap.samples, MIN_CONTROL_SAMPLES)
    verdicts = judge_controls(controls, samples, p.bootstrap.seed, judges=p.judges)
    informative = {name: bool(v["informative"]) for name, v in verdicts.items()}
    stats = {**panel_stats(ratings), "yields": public(rating_yields(ratings, items)),
             "controls": verdicts, "controls_agreement": control_agreement(controls),
             "informative": informative, "panel_informative": any(informative.values())}  # fmt: skip
    write_tables([(ratings, p.out.ratings, JudgeRatingSchema), (rubric, p.out.rubric, RubricSchema)])
    write_json(p.out.judges, stats)
    say(
        "evaluate_panel: "
        + ", ".join(f"{k} failures {v['parse_failure_rate']:.1%}" for k, v in stats["judges"].items())
        + "; "
        + ", ".join(f"{k} {'informative' if ok else 'UNINFORMATIVE'}" for k, ok in informative.items())
    )


def _controls(panel: str, name: str) -> pd.DataFrame:
    """One judge's control ratings; a folder written before the controls is an error naming the file."""
    path = controls_table(panel, name)
    if not path.is_file():
        raise CurllError(f"no control ratings (a judge folder older than the controls): rerun "
                         f"evaluate_judge@{name}", file=path)  # fmt: skip
    return read_table(path, ControlRatingSchema)


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
