"""The judge panel: every judge rates every answer 1-5, with a reason if asked (structured output).

:func:`judge` asks each judge (an ``llm.profiles`` entry, through the engine) with the prompt
of the item's type (``prompts/judge_<type>.j2``, rendered with ``explain``) and
:func:`judge_schema`: the rating first, then, with ``explain``, a one-sentence reason. A
judge's output that does not parse or breaks the schema is a recorded failure (``rating``
null, ``status`` reject, ``reason``), never a crash. Rows (:data:`RATING_COLUMNS` +
provenance): one per (answer, judge). An answer is one ``repeat`` of an (item, run)
(``evaluate.repeats``): the judge rates repeat r with its task's sampling seed + r (repeat 0
with the task's own, so its requests are those of a single answer), so the judge's sampling
noise is drawn once per answer too. An answer whose generation was rejected (``status`` not
ok: no text) is not judged at all: it has no rating row. When the engine rejected the model's
output as empty or as a loop (:func:`no_answer`), the model gave no answer: it scores
:data:`NO_ANSWER_SCORE`, the rubric's lowest, without a judge. Any other reject (a backend
error) is no answer of the model's: its score is missing (NaN), and
:func:`unanswered` counts it.

:func:`panel_stats` reports per judge the parse-failure rate and mean rating, and per pair of
judges their agreement on the answers both rated: quadratic-weighted Cohen's kappa, Spearman's
rho and exact-agreement share. :func:`item_scores` averages the ratings of each answer that
parsed (:func:`curll.evaluate.analysis.scores_table` then averages an item's repeats).

:func:`rate_controls`: each judge also rates control answers of a sample of items
(:mod:`curll.evaluate.controls`: the reference, another item's reference, the empty answer, the
reference's words shuffled), asked through :func:`judge` as answers of the run
``control/<control>``, so with the same prompts and schema; they are kept apart from the
answers' ratings and yields (:func:`overall_yield` pools both, per judge).

:func:`rubric` (optional, ``evaluate.rubric``): each judge also scores every answer on five
criteria of grade-level fit (:data:`CRITERIA`), 1-5 each.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from curll.artifacts import empty_table, records
from curll.config import Params
from curll.config.llm import MaxChars
from curll.instances import evaluated
from curll.llm.engine import Engine
from curll.llm.tasks import Task, TaskDef, ask, provenance
from curll.schemas.evaluate import ControlRatingSchema
from curll.yields import measure, unit_frame

RATING_COLUMNS = ["item_id", "run", "repeat", "judge", "type", "rating", "explanation"]


Panel = Mapping[str, tuple[Engine, Mapping[str, Task]]]


def judge_tables(panel_dir: str | Path, name: str) -> tuple[Path, Path]:
    """Where one judge's ratings and rubric scores are kept: ``panel_dir/<name>/ratings.parquet``
    and ``rubric.parquet`` (one folder a judge, so that each judge is its own DVC stage)."""
    folder = Path(panel_dir) / name
    return folder / "ratings.parquet", folder / "rubric.parquet"


def controls_table(panel_dir: str | Path, name: str) -> Path:
    """Where one judge's control ratings are kept: ``panel_dir/<name>/controls.parquet``."""
    return Path(panel_dir) / name / "controls.parquet"


def answered(answers: pd.DataFrame) -> pd.DataFrame:
    """The answers that were generated (``status`` ok): the only ones a judge sees."""
    return answers[answers["status"] == "ok"]


def with_repeat(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with a ``repeat`` column: its own, or 0 (a table of one answer per item and run)."""
    return table if "repeat" in table.columns else table.assign(repeat=0)


def _fields(answers: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """What a judge is shown: each generated answer joined with its item."""
    return with_repeat(answered(answers))[["item_id", "run", "repeat", "answer"]].merge(
        items, on="item_id", how="left", validate="m:1"
    )


def _by_repeat(fields: pd.DataFrame) -> list[tuple[int, pd.DataFrame]]:
    """(repeat, its rows in their order) of ``fields``, by repeat."""
    return [(int(r), fields[fields["repeat"] == r]) for r in sorted(fields["repeat"].unique())]


def repeat_task(task: Task, repeat: int) -> Task:
    """``task`` of the answers' repeat ``repeat``: its sampling seed + ``repeat`` (repeat 0, or a
    task without a seed: ``task`` itself)."""
    seed = task.sampling.seed
    if repeat == 0 or seed is None:
        return task
    return replace(task, sampling=replace(task.sampling, seed=seed + repeat))


#: the score of an answer the model did not give (blank, or cut off in a loop): the judge
#: rubric's lowest rating ("wrong, empty or nonsense"), so giving up never scores higher
NO_ANSWER_SCORE = 1.0


def no_answer(answers: pd.DataFrame) -> pd.Series:
    """True where the model gave no usable answer: the engine rejected its output as empty or
    as a loop. Other rejects (a backend error) are not the model's answer: their score is missing."""
    reason = answers["reason"].fillna("").astype(str)
    rejected = answers["status"] != "ok"
    return rejected & (reason.str.startswith("empty output") | reason.str.startswith("degenerate"))


def unanswered(answers: pd.DataFrame) -> dict[str, int]:
    """Rejects other than :func:`no_answer` per run, every repeat counted (backend errors: their
    scores are missing)."""
    bad = answers[(answers["status"] != "ok") & ~no_answer(answers)]
    return {str(k): int(v) for k, v in bad.groupby("run").size().items()}


def judge_schema(caps: MaxChars, *, explain: bool) -> dict[str, Any]:
    """``{"rating": 1-5}``, and with ``explain`` ``"explanation"`` after it (``caps.short`` chars)."""
    props: dict[str, Any] = {"rating": {"type": "integer", "enum": [1, 2, 3, 4, 5]}}
    if explain:
        props["explanation"] = {"type": "string", "minLength": 1, "maxLength": caps.short}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def _rating(kind: str) -> TaskDef:
    def judges(params: Params) -> Sequence[str]:
        return params.evaluate.judges if kind in params.evaluate.types else ()

    def prompt(params: Params) -> str:
        return params.evaluate.prompts[kind]

    def schema(params: Params, caps: MaxChars) -> dict[str, Any]:
        return judge_schema(caps, explain=params.evaluate.explain)

    return TaskDef(f"judge rating ({kind})", prompt, schema, judges)


def rating_tasks() -> dict[str, TaskDef]:
    """The judge's rating of an answer, one task (and prompt) per test type
    (:func:`curll.instances.evaluated`), answered by every judge."""
    return {kind: _rating(kind) for kind in evaluated()}


def judge(answers: pd.DataFrame, items: pd.DataFrame, judges: Panel, *, explain: bool) -> pd.DataFrame:
    """Ratings of every generated answer by every judge; ``judges``: name -> (engine, task per
    type), each task built on :func:`judge_schema` with the same ``explain``. ``explanation``:
    the judge's reason, empty when not asked or not parsed. An answer of ``repeat`` r (0 when
    ``answers`` has no such column) is rated with the task's seed + r (:func:`repeat_task`)."""
    fields = _fields(answers, items)
    rows: list[dict[str, Any]] = []
    for name, (engine, tasks) in judges.items():
        for kind, of_kind in fields.groupby("type", sort=True):
            for repeat, group in _by_repeat(of_kind):
                task = repeat_task(tasks[str(kind)], repeat)
                rows_in = [{**r, "instruction": r["question"], "explain": explain} for r in records(group)]
                for r, a in zip(rows_in, ask(engine, task, rows_in), strict=True):
                    parsed = a.result.parsed if a.ok else None
                    rows.append({"item_id": r["item_id"], "run": r["run"], "repeat": repeat, "judge": name,
                                 "type": kind, "rating": float(parsed["rating"]) if parsed else np.nan,
                                 "explanation": str(parsed.get("explanation", "")) if parsed else "",
                                 **provenance(a)})  # fmt: skip
    return pd.DataFrame(rows)


#: the pseudo-run of a control's ratings inside :func:`judge`
CONTROL_RUN = "control/"


def rate_controls(
    controls: pd.DataFrame, items: pd.DataFrame, judges: Panel, *, explain: bool
) -> pd.DataFrame:
    """Ratings (:class:`~curll.schemas.evaluate.ControlRatingSchema`) of the control rows of
    :func:`curll.evaluate.controls.control_sample` by every judge, through :func:`judge`: each
    control is an answer (status ok, so the empty one is rated too) of run ``control/<control>``."""
    if controls.empty:
        return empty_table(ControlRatingSchema)
    pseudo = controls.assign(run=CONTROL_RUN + controls["control"], status="ok")
    rated = judge(pseudo[["item_id", "run", "answer", "status"]], items, judges, explain=explain)
    rated["control"] = rated.pop("run").str.removeprefix(CONTROL_RUN)
    rated = rated.drop(columns="repeat")  # one rating a control (repeat 0: the judge's own seed)
    out = rated.merge(controls[["item_id", "control", "stage", "answer"]], on=["item_id", "control"],
                      how="left", validate="m:1")  # fmt: skip
    first = ["item_id", "stage", "type", "control", "judge", "answer", "rating", "explanation"]
    return out[first + [c for c in out.columns if c not in first]]


def overall_yield(ratings: pd.DataFrame, controls: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per judge, the share of all its ratings (answers and controls, every stage pooled) that
    parsed, as :func:`curll.yields.measure` yields with the one stage ``all``."""
    both = pd.concat([ratings[["judge", "rating", "reason"]], controls[["judge", "rating", "reason"]]])
    pooled = measure(unit_frame([0] * len(both), both["judge"], both["rating"].notna(), both["reason"]))
    return {kind: {"all": by_stage["0"]} for kind, by_stage in pooled.items()}


def item_scores(ratings: pd.DataFrame) -> pd.DataFrame:
    """(item_id, model, repeat) -> score: mean of the judges' parsed ratings of that answer (NaN
    if none parsed), and ``judged``: how many judges parsed (ratings without a ``repeat``
    column: repeat 0). :func:`curll.evaluate.analysis.scores_table` averages the repeats."""
    g = with_repeat(ratings).groupby(["item_id", "run", "repeat"], sort=True)["rating"]
    return pd.DataFrame({"score": g.mean(), "judged": g.count()}).reset_index()


def rating_yields(ratings: pd.DataFrame, items: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """:func:`curll.yields.measure` of ``ratings`` with the judge as the type: per judge and
    test stage (from ``items``' ``stage``), the share of ratings that parsed, and why not."""
    stage_of = dict(zip(items["item_id"], items["stage"], strict=True))
    stages = [stage_of[i] for i in ratings["item_id"]]
    return measure(unit_frame(stages, ratings["judge"], ratings["rating"].notna(), ratings["reason"]))


def panel_stats(ratings: pd.DataFrame) -> dict[str, Any]:
    """Per judge: answers (every repeat), parse failures and their rate, mean rating; per pair:
    agreement on the answers (every repeat) both rated."""
    from scipy.stats import spearmanr  # type: ignore[import-untyped]
    from sklearn.metrics import cohen_kappa_score

    judges: dict[str, Any] = {}
    for name, g in ratings.groupby("judge", sort=True):
        failed = int(g["rating"].isna().sum())
        judges[str(name)] = {"answers": len(g), "parse_failures": failed,
                             "parse_failure_rate": round(failed / max(1, len(g)), 4),
                             "mean_rating": _round(g["rating"].mean())}  # fmt: skip
    keys = ["item_id", "run", "repeat"]
    wide = with_repeat(ratings).pivot_table(index=keys, columns="judge", values="rating", aggfunc="first")
    pairs: dict[str, Any] = {}
    for a, b in itertools.combinations(sorted(judges), 2):
        both = wide[[a, b]].dropna() if {a, b} <= set(wide.columns) else pd.DataFrame()
        if len(both) < 2:
            pairs[f"{a}|{b}"] = {"n": len(both), "kappa_quadratic": None, "spearman": None, "exact": None}
            continue
        x, y = both[a].astype(int), both[b].astype(int)
        kappa = cohen_kappa_score(x, y, weights="quadratic", labels=[1, 2, 3, 4, 5])
        rho = spearmanr(x, y).statistic if x.nunique() > 1 and y.nunique() > 1 else np.nan
        pairs[f"{a}|{b}"] = {"n": len(both), "kappa_quadratic": _round(kappa), "spearman": _round(rho),
                             "exact": round(float((x == y).mean()), 4)}  # fmt: skip
    return {"judges": judges, "agreement": pairs}


def _round(v: Any) -> float | None:
    return None if v is None or pd.isna(v) else round(float(v), 4)


#: criteria of the optional multi-criteria rubric (grade-level fit, after EduAdapt)
CRITERIA = ("vocabulary", "concepts", "correctness", "clarity", "completeness")


def rubric_schema(caps: MaxChars) -> dict[str, Any]:
    score = {"type": "integer", "enum": [1, 2, 3, 4, 5]}
    return {
        "type": "object",
        "properties": {**dict.fromkeys(CRITERIA, score),
                       "explanation": {"type": "string", "minLength": 1, "maxLength": caps.short}},
        "required": [*CRITERIA, "explanation"],
        "additionalProperties": False,
    }  # fmt: skip


def _rubric_judges(params: Params) -> Sequence[str]:
    return params.evaluate.judges if params.evaluate.rubric.enabled else ()


#: the optional rubric, answered by every judge when ``evaluate.rubric.enabled``
RUBRIC = TaskDef("judge rubric", lambda params: params.evaluate.rubric.prompt,
                 lambda params, caps: rubric_schema(caps), _rubric_judges)  # fmt: skip


def rubric(
    answers: pd.DataFrame, items: pd.DataFrame, judges: Mapping[str, tuple[Engine, Task]]
) -> pd.DataFrame:
    """Rubric scores of every answer by every judge: one row per (answer, judge) with a column
    per criterion (null when the judge's output did not parse) and provenance; repeat r with the
    task's seed + r, as :func:`judge`."""
    fields = _fields(answers, items)
    rows: list[dict[str, Any]] = []
    for name, (engine, task) in judges.items():
        for repeat, group in _by_repeat(fields):
            rows_in = records(group)
            for r, a in zip(rows_in, ask(engine, repeat_task(task, repeat), rows_in), strict=True):
                parsed = a.result.parsed if a.ok else None
                scores = {c: float(parsed[c]) if parsed else np.nan for c in CRITERIA}
                why = str(parsed["explanation"]) if parsed else ""
                rows.append({"item_id": r["item_id"], "run": r["run"], "repeat": repeat, "judge": name,
                             "type": r["type"], **scores, "explanation": why, **provenance(a)})  # fmt: skip
    return pd.DataFrame(rows)
