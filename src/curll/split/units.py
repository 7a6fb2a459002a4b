"""Split units and their quality ratings.

A unit is what moves into a split as a whole: an IR pair, or a passage together with its
CQA and CSQA pairs (so a passage and its questions never straddle two splits). The unit id
is the IR pair's or the passage's instance id.

:func:`build_units` returns one row per unit: unit_id, type (context | ir), stage,
indicator_id, content (the text a rater and the decontamination check read).
:func:`rated_sample` picks the units the LLM rates: per (stage, indicator, type) the first
``k`` by the seeded tie hash of :mod:`curll.split.assign` (the paper rates 100 random units per
indicator and type, not all of them, so rating costs O(indicators), not O(instances)).
:func:`rate` asks the quality prompt for each unit it is given ({"rating": 1-5, "explanation"})
and returns the ratings table (RatingSchema); a failed request is a rating of 0, never a crash.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from curll.artifacts import records
from curll.config.llm import MaxChars
from curll.errors import CurllError
from curll.llm.engine import Engine
from curll.llm.tasks import Task, TaskDef, ask, provenance
from curll.split.assign import tie_key

UNIT_COLUMNS = ["unit_id", "type", "stage", "indicator_id", "content"]


def rating_schema(caps: MaxChars) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "rating": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
            "explanation": {"type": "string", "minLength": 1, "maxLength": caps.short},
        },
        "required": ["rating", "explanation"],
        "additionalProperties": False,
    }


#: the quality rating of a unit, answered by split's rater (``split.rater``)
RATING = TaskDef("quality rating", lambda params: params.split.prompt,
                 lambda params, caps: rating_schema(caps), lambda params: (params.split.rater,))  # fmt: skip


#: the QA blocks of a passage unit, in order: (type, title)
QA_TITLES = (("cqa", "Comprehension questions"), ("csqa", "Skill tasks"))


def passage_content(text: str, pairs: Mapping[str, Sequence[tuple[str, str]]]) -> str:
    """A passage unit's text: the passage, then a numbered block per QA type that has pairs
    (``pairs``: type -> (question, answer) in q_index order)."""
    parts = [text]
    for kind, title in QA_TITLES:
        if pairs.get(kind):
            lines = [f"{title}:"] + [f"{i}. {q}\n   -> {a}" for i, (q, a) in enumerate(pairs[kind], 1)]
            parts.append("\n".join(lines))
    return "\n\n".join(parts)


def ir_content(instruction: str, response: str) -> str:
    return f"Instruction: {instruction}\nResponse: {response}"


def unit_index(contexts: pd.DataFrame, ir: pd.DataFrame) -> pd.DataFrame:
    """unit_id, type, stage and indicator_id of every unit, by unit_id, from the id columns of
    the verified passages and IR pairs (instance_id, stage, indicator_id); an id twice is an error."""
    cols = ["instance_id", "stage", "indicator_id"]
    df = pd.concat([contexts[cols].assign(type="context"), ir[cols].assign(type="ir")], ignore_index=True)
    df = df.rename(columns={"instance_id": "unit_id"})[["unit_id", "type", "stage", "indicator_id"]]
    twice = df["unit_id"].duplicated()
    if twice.any():
        raise CurllError(f"unit {df.loc[twice, 'unit_id'].iloc[0]} appears twice", field="instance_id")
    return df.sort_values("unit_id").reset_index(drop=True)


def records_made(units: pd.DataFrame, qa: Iterable[tuple[str, str, int]]) -> dict[str, Counter[str]]:
    """unit_id -> the test items each unit of ``units`` (:func:`unit_index`) makes, by type: an IR
    pair one ``ir``; a passage one per kept pair of each QA type (``qa``: (context_id, type, pairs),
    e.g. :meth:`~curll.split.workspace.Workspace.qa_counts`). A passage's own record is no test
    item, so it is not counted."""
    made = {
        u: Counter({"ir": 1} if t == "ir" else {})
        for u, t in zip(units["unit_id"], units["type"], strict=True)
    }
    for unit, kind, n in qa:
        if unit in made:
            made[unit][kind] += n
    return made


def build_units(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Units from the verified tables (keys context, ir, cqa, csqa), sorted by id."""
    qa = {k: dict(tuple(tables[k].groupby("context_id", sort=False))) for k in ("cqa", "csqa")}
    rows = []
    for c in records(tables["context"]):
        pairs = {}
        for kind, _ in QA_TITLES:
            group = qa[kind].get(c["instance_id"])
            if group is not None:
                group = group.sort_values("q_index")
                pairs[kind] = list(zip(group["question"], group["answer"], strict=True))
        content = passage_content(c["text"], pairs)
        rows.append([c["instance_id"], "context", c["stage"], c["indicator_id"], content])
    for r in records(tables["ir"]):
        rows.append(
            [
                r["instance_id"],
                "ir",
                r["stage"],
                r["indicator_id"],
                ir_content(r["instruction"], r["response"]),
            ]
        )
    df = pd.DataFrame(rows, columns=UNIT_COLUMNS)
    return df.sort_values("unit_id").reset_index(drop=True)


def rated_sample(units: pd.DataFrame, k: int, seed: int) -> pd.DataFrame:
    """The units to rate, in the units' order: at most ``k`` per (stage, indicator_id, type),
    chosen by ``tie_key(seed, unit_id)`` (independent of row order)."""
    order = pd.Series([tie_key(seed, u) for u in units["unit_id"]], index=units.index)
    rank = order.groupby([units["stage"], units["indicator_id"], units["type"]]).rank(method="first")
    return units[rank.to_numpy(dtype=float) <= k]


def rate(units: pd.DataFrame, indicators: pd.DataFrame, engine: Engine, task: Task) -> pd.DataFrame:
    """One rating row per unit, in the units' order."""
    info = indicators.set_index("indicator_id")[["age_group", "indicator"]]
    fields = [{**u, **info.loc[u["indicator_id"]].to_dict()} for u in records(units)]
    rows = []
    for u, answer in zip(records(units), ask(engine, task, fields), strict=True):
        parsed = answer.result.parsed if answer.ok else None
        rows.append(
            {
                **provenance(answer),
                "unit_id": u["unit_id"],
                "type": u["type"],
                "stage": u["stage"],
                "indicator_id": u["indicator_id"],
                "rating": int(parsed["rating"]) if parsed else 0,
                "explanation": str(parsed["explanation"]) if parsed else "",
            }
        )
    return pd.DataFrame(rows)
