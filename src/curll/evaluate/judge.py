"""The judge panel: every judge rates every answer 1-5, with a reason if asked (structured output).

:func:`judge` asks each judge (an ``llm.profiles`` entry, through the engine) with the prompt
of the item's type (``prompts/judge_<type>.j2``, rendered with ``explain``) and
:func:`judge_schema`: the rating first, then, with ``explain``, a one-sentence reason. A
judge's output that does not parse or breaks the schema is a recorded failure (``rating``
null, ``status`` reject, ``reason``), never a crash. Rows (:data:`RATING_COLUMNS` +
provenance): one per (answer, judge). An answer whose generation was rejected (``status`` not
ok: no text) is not judged at all: it has no rating row. When the engine rejected the model's
output as empty or as a loop (:func:`no_answer`), the model gave no answer: it scores
:data:`NO_ANSWER_SCORE`, the rubric's lowest, without a judge. Any other reject (a backend
error) is no answer of the model's: its score is missing (NaN), and
:func:`unanswered` counts it.

:func:`panel_stats` reports per judge the parse-failure rate and mean rating, and per pair of
judges their agreement on the answers both rated: quadratic-weighted Cohen's kappa, Spearman's
rho and exact-agreement share. :func:`item_scores` averages the ratings that parsed.

:func:`rubric` (optional, ``evaluate.rubric``): each judge also scores every answer on five
criteria of grade-level fit (:data:`CRITERIA`), 1-5 each.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

import numpy as np
import pandas as pd

from curll.artifacts import records
from curll.config import Params
from curll.config.evaluate import TestType
from curll.config.llm import MaxChars
from curll.llm.engine import Engine
from curll.llm.tasks import Task, TaskDef, ask, provenance
from curll.yields import measure, unit_frame

RATING_COLUMNS = ["item_id", "run", "judge", "type", "rating", "explanation"]


Panel = Mapping[str, tuple[Engine, Mapping[str, Task]]]


def judge_tables(panel_dir: str | Path, name: str) -> tuple[Path, Path]:
    """Where one judge's ratings and rubric scores are kept: ``panel_dir/<name>/ratings.parquet``
    and ``rubric.parquet`` (one folder a judge, so that each judge is its own DVC stage)."""
    folder = Path(panel_dir) / name
    return folder / "ratings.parquet", folder / "rubric.parquet"


def answered(answers: pd.DataFrame) -> pd.DataFrame:
    """The answers that were generated (``status`` ok): the only ones a judge sees."""
    return answers[answers["status"] == "ok"]


def _fields(answers: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """What a judge is shown: each generated answer joined with its item."""
    return answered(answers)[["item_id", "run", "answer"]].merge(
        items, on="item_id", how="left", validate="m:1"
    )


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
    """Rejects other than :func:`no_answer` per run (backend errors: their scores are missing)."""
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
        return params.evaluate.prompts[kind]  # type: ignore[index]  # kind: one of TestType

    def schema(params: Params, caps: MaxChars) -> dict[str, Any]:
        return judge_schema(caps, explain=params.evaluate.explain)

    return TaskDef(f"judge rating ({kind})", prompt, schema, judges)


#: the judge's rating of an answer, one prompt per test type, answered by every judge
RATINGS = {kind: _rating(kind) for kind in get_args(TestType)}


def judge(answers: pd.DataFrame, items: pd.DataFrame, judges: Panel, *, explain: bool) -> pd.DataFrame:
    """Ratings of every generated answer by every judge; ``judges``: name -> (engine, task per
    type), each task built on :func:`judge_schema` with the same ``explain``. ``explanation``:
    the judge's reason, empty when not asked or not parsed."""
    fields = _fields(answers, items)
    rows: list[dict[str, Any]] = []
    for name, (engine, tasks) in judges.items():
        for kind, group in fields.groupby("type", sort=True):
            rows_in = [{**r, "instruction": r["question"], "explain": explain} for r in records(group)]
            for r, a in zip(rows_in, ask(engine, tasks[str(kind)], rows_in), strict=True):
                parsed = a.result.parsed if a.ok else None
                rows.append({"item_id": r["item_id"], "run": r["run"], "judge": name, "type": kind,
                             "rating": float(parsed["rating"]) if parsed else np.nan,
                             "explanation": str(parsed.get("explanation", "")) if parsed else "",
                             **provenance(a)})  # fmt: skip
    return pd.DataFrame(rows)


def item_scores(ratings: pd.DataFrame) -> pd.DataFrame:
    """(item_id, model) -> score: mean of the judges' parsed ratings (NaN if none parsed), and
    ``judged``: how many judges parsed."""
    g = ratings.groupby(["item_id", "run"], sort=True)["rating"]
    return pd.DataFrame({"score": g.mean(), "judged": g.count()}).reset_index()


def rating_yields(ratings: pd.DataFrame, items: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """:func:`curll.yields.measure` of ``ratings`` with the judge as the type: per judge and
    test stage (from ``items``' ``stage``), the share of ratings that parsed, and why not."""
    stage_of = dict(zip(items["item_id"], items["stage"], strict=True))
    stages = [stage_of[i] for i in ratings["item_id"]]
    return measure(unit_frame(stages, ratings["judge"], ratings["rating"].notna(), ratings["reason"]))


def panel_stats(ratings: pd.DataFrame) -> dict[str, Any]:
    """Per judge: answers, parse failures and their rate, mean rating; per pair: agreement."""
    from scipy.stats import spearmanr  # type: ignore[import-untyped]
    from sklearn.metrics import cohen_kappa_score

    judges: dict[str, Any] = {}
    for name, g in ratings.groupby("judge", sort=True):
        failed = int(g["rating"].isna().sum())
        judges[str(name)] = {"answers": len(g), "parse_failures": failed,
                             "parse_failure_rate": round(failed / max(1, len(g)), 4),
                             "mean_rating": _round(g["rating"].mean())}  # fmt: skip
    wide = ratings.pivot_table(index=["item_id", "run"], columns="judge", values="rating", aggfunc="first")
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
    per criterion (null when the judge's output did not parse) and provenance."""
    fields = records(_fields(answers, items))
    rows: list[dict[str, Any]] = []
    for name, (engine, task) in judges.items():
        for r, a in zip(fields, ask(engine, task, fields), strict=True):
            parsed = a.result.parsed if a.ok else None
            scores = {c: float(parsed[c]) if parsed else np.nan for c in CRITERIA}
            why = str(parsed["explanation"]) if parsed else ""
            rows.append({"item_id": r["item_id"], "run": r["run"], "judge": name, "type": r["type"], **scores,
                         "explanation": why, **provenance(a)})  # fmt: skip
    return pd.DataFrame(rows)
