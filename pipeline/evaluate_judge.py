"""DVC stage ``evaluate_judge@<judge>``: one judge of the panel rates every answer.

A ``foreach`` stage over ``evaluate.judges`` (``llm.profiles`` names), so each judge depends on
its own profile's params alone, and adding a judge leaves the other judges' stages as they are. Reads
``evaluate.out.items`` and ``evaluate.out.answers``; the judge rates every answer with
``evaluate.prompts[type]`` (with ``evaluate.explain``, a one-sentence reason after each rating)
and, with ``evaluate.rubric.enabled``, scores its five criteria. Writes the folder
``evaluate.out.panel/<judge>/`` (:func:`curll.evaluate.judge.judge_tables`: ``ratings.parquet``,
every rating with provenance, failures kept with their reason; ``rubric.parquet``, empty
without the rubric) as one atomic step. Stops, writing nothing, when fewer than
``evaluate.min_yield`` of a stage's ratings parse. ``evaluate_panel`` joins the judges.
"""

from __future__ import annotations

from curll.artifacts import atomic_dir, empty_table, read_table, write_tables
from curll.config import Params
from curll.errors import CurllError
from curll.evaluate.judge import RATINGS, RUBRIC, judge, judge_tables, rating_yields, rubric
from curll.llm.factory import engine_from_params, make_task
from curll.llm.tasks import Task
from curll.schemas.evaluate import AnswerSchema, ItemSchema, JudgeRatingSchema, RubricSchema
from curll.yields import check_yields
from pipeline.report import say


def run(params: Params, name: str) -> None:
    p = params.evaluate
    if name not in p.judges:
        raise CurllError(
            f"judge '{name}' is not one of evaluate.judges {list(p.judges)}", field="evaluate.judges"
        )
    items = read_table(p.out.items, ItemSchema)
    answers = read_table(p.out.answers, AnswerSchema)
    with engine_from_params(
        params.llm, models=params.llm_models, desc=f"judge {name}", profile=name
    ) as engine:
        tasks: dict[str, Task] = {t: make_task(params, RATINGS[t], profile=name) for t in p.types}
        ratings = judge(answers, items, {name: (engine, tasks)}, explain=p.explain)
        scores = (
            rubric(answers, items, {name: (engine, make_task(params, RUBRIC, profile=name))})
            if p.rubric.enabled
            else empty_table(RubricSchema)
        )
    check_yields(
        f"evaluate_judge@{name}", rating_yields(ratings, items), p.min_yield, key="evaluate.min_yield"
    )
    folder = judge_tables(p.out.panel, name)[0].parent
    with atomic_dir(folder) as tmp:
        ratings_path, rubric_path = judge_tables(tmp.parent, tmp.name)
        write_tables([(ratings, ratings_path, JudgeRatingSchema), (scores, rubric_path, RubricSchema)])
    failed = float(ratings["rating"].isna().mean()) if len(ratings) else 0.0
    say(f"evaluate_judge@{name}: {len(ratings)} ratings, {failed:.1%} failed to parse -> {folder}")
