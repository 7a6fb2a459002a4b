"""DVC stage ``evaluate_judge@<judge>``: one judge of the panel rates every answer.

A ``foreach`` stage over ``evaluate.judges`` (``llm.profiles`` names), so each judge depends on
its own profile's params alone, and adding a judge leaves the other judges' stages as they are. Reads
``evaluate.out.items`` and ``evaluate.out.answers``; the judge rates every answer with
``evaluate.prompts[type]`` (with ``evaluate.explain``, a one-sentence reason after each rating)
and, with ``evaluate.rubric.enabled``, scores its five criteria; each of the
``evaluate.repeats`` answers of an item and model, repeat r with the judge's sampling seed + r
(answers of other repeats than ``evaluate.repeats`` asks for are an error: rerun
``evaluate_infer``). It also rates the control
answers of ``evaluate.controls.per_type`` items of each stage and type
(:mod:`curll.evaluate.controls`: reference, mismatch, empty, shuffled) with the same prompts.
Writes the folder ``evaluate.out.panel/<judge>/`` (:func:`curll.evaluate.judge.judge_tables`:
``ratings.parquet``, every rating with provenance, failures kept with their reason;
``rubric.parquet``, empty without the rubric; :func:`~curll.evaluate.judge.controls_table`:
``controls.parquet``, the control ratings) as one atomic step. Stops, writing nothing, when
fewer than ``evaluate.min_yield`` of a stage's answer ratings parse, or of all the judge's
ratings (answers and controls together; controls alone never fail a stage). ``evaluate_panel``
joins the judges.
"""

from __future__ import annotations

from curll.artifacts import atomic_dir, empty_table, read_table, write_tables
from curll.config import Params
from curll.errors import CurllError
from curll.evaluate.controls import control_sample
from curll.evaluate.judge import (
    RUBRIC,
    controls_table,
    judge,
    judge_tables,
    overall_yield,
    rate_controls,
    rating_tasks,
    rating_yields,
    rubric,
)
from curll.llm.factory import engine_from_params, make_task
from curll.llm.tasks import Task
from curll.schemas.evaluate import (
    AnswerSchema,
    ControlRatingSchema,
    ItemSchema,
    JudgeRatingSchema,
    RubricSchema,
)
from curll.yields import check_yields
from pipeline.tools.console import say


def run(params: Params, name: str) -> None:
    p = params.evaluate
    if name not in p.judges:
        raise CurllError(
            f"judge '{name}' is not one of evaluate.judges {list(p.judges)}", field="evaluate.judges"
        )
    items = read_table(p.out.items, ItemSchema)
    answers = read_table(p.out.answers, AnswerSchema)
    found = sorted(int(r) for r in answers["repeat"].unique())
    if found and found != list(range(p.repeats)):
        raise CurllError(f"the answers are of repeats {found}, evaluate.repeats is {p.repeats}: rerun "
                         "evaluate_infer", file=p.out.answers, field="evaluate.repeats")  # fmt: skip
    sample = control_sample(items[items["type"].isin(p.types)], p.controls.per_type, p.controls.seed)
    with engine_from_params(
        params.llm, models=params.llm_models, desc=f"judge {name}", profile=name
    ) as engine:
        tasks: dict[str, Task] = {t: make_task(params, rating_tasks()[t], profile=name) for t in p.types}
        ratings = judge(answers, items, {name: (engine, tasks)}, explain=p.explain)
        controls = rate_controls(sample, items, {name: (engine, tasks)}, explain=p.explain)
        scores = (
            rubric(answers, items, {name: (engine, make_task(params, RUBRIC, profile=name))})
            if p.rubric.enabled
            else empty_table(RubricSchema)
        )
    for yields in (rating_yields(ratings, items), overall_yield(ratings, controls)):
        check_yields(f"evaluate_judge@{name}", yields, p.min_yield, key="evaluate.min_yield")
    folder = judge_tables(p.out.panel, name)[0].parent
    with atomic_dir(folder) as tmp:
        ratings_path, rubric_path = judge_tables(tmp.parent, tmp.name)
        write_tables([(ratings, ratings_path, JudgeRatingSchema), (scores, rubric_path, RubricSchema),
                      (controls, controls_table(tmp.parent, tmp.name), ControlRatingSchema)])  # fmt: skip
    failed = float(ratings["rating"].isna().mean()) if len(ratings) else 0.0
    say(
        f"evaluate_judge@{name}: {len(ratings)} ratings, {failed:.1%} failed to parse, "
        f"{len(controls)} control ratings -> {folder}"
    )
