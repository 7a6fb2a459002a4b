"""DVC stage ``evaluate_judge``: the judge panel rates every answer.

Reads ``evaluate.out.items`` and ``evaluate.out.answers``; every judge of ``evaluate.judges``
(an ``llm.profiles`` name) rates every answer with ``evaluate.prompts[type]`` (with
``evaluate.explain``, a one-sentence reason after each rating). Writes
``evaluate.out.ratings`` (every judge's rating, with provenance; failures kept with their
reason), ``evaluate.out.rubric`` (with ``evaluate.rubric.enabled``: every judge's five
criterion scores per answer) and ``evaluate.out.judges`` (parse-failure rates, agreement).
"""

from __future__ import annotations

from contextlib import ExitStack

import pandas as pd

from curll.artifacts import empty_table, read_table, write_json, write_tables
from curll.config import Params
from curll.evaluate.judge import RATINGS, RUBRIC, judge, panel_stats, rubric
from curll.llm.engine import Engine
from curll.llm.factory import engine_from_params, make_task
from curll.llm.tasks import Task
from curll.schemas.evaluate import AnswerSchema, ItemSchema, JudgeRatingSchema, RubricSchema
from curll.yields import check_yields, measure, public, unit_frame
from pipeline.report import say


def run(params: Params) -> None:
    p = params.evaluate
    items = read_table(p.out.items, ItemSchema)
    answers = read_table(p.out.answers, AnswerSchema)
    with ExitStack() as engines:  # every judge's engine is closed (its servers stopped) at the end
        ratings, rubric_rows = _rate(params, items, answers, engines)
    stage_of = dict(zip(items["item_id"], items["stage"], strict=True))
    stages = [stage_of[i] for i in ratings["item_id"]]
    yields = measure(unit_frame(stages, ratings["judge"], ratings["rating"].notna(), ratings["reason"]))
    check_yields("evaluate_judge", yields, p.min_yield, key="evaluate.min_yield")
    stats = {**panel_stats(ratings), "yields": public(yields)}
    write_tables([(ratings, p.out.ratings, JudgeRatingSchema), (rubric_rows, p.out.rubric, RubricSchema)])
    write_json(p.out.judges, stats)
    say(
        "evaluate_judge: "
        + ", ".join(f"{k} failures {v['parse_failure_rate']:.1%}" for k, v in stats["judges"].items())
    )


def _rate(
    params: Params, items: pd.DataFrame, answers: pd.DataFrame, engines: ExitStack
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every judge's ratings, and with ``evaluate.rubric.enabled`` its rubric scores (else empty)."""
    p = params.evaluate
    panel: dict[str, tuple[Engine, dict[str, Task]]] = {}
    llm = params.llm
    for name in p.judges:
        engine = engines.enter_context(
            engine_from_params(llm, models=params.llm_models, desc=f"judge {name}", profile=name)
        )
        panel[name] = (engine, {t: make_task(params, RATINGS[t], profile=name) for t in p.types})
    ratings = judge(answers, items, panel, explain=p.explain)
    if not p.rubric.enabled:
        return ratings, empty_table(RubricSchema)
    tasks = {n: (engine, make_task(params, RUBRIC, profile=n)) for n, (engine, _) in panel.items()}
    return ratings, rubric(answers, items, tasks)
