"""Split units and their quality ratings.

A unit is what moves into a split as a whole: an instance of a seeded type (:mod:`curll.instances`)
with the instances made on it: an IR pair, or a passage together with its CQA and CSQA pairs
(so a passage and its questions never straddle two splits). The unit id is that instance's id.

:func:`build_units` returns one row per unit: unit_id, type (a seeded type: context | ir), stage,
indicator_id, content (the text a rater and the decontamination check read: :func:`unit_content`).
:func:`rated_sample` picks the units the LLM rates: per (stage, indicator, type) the first
``k`` of a :func:`curll.draws.bottom_k` draw of their ids (the paper rates 100 random units per
indicator and type, not all of them, so rating costs O(indicators), not O(instances)).
:func:`rate` asks the quality prompt for each unit it is given ({"rating": 1-5, "explanation"})
and returns the ratings table (RatingSchema); a failed request is a rating of 0, never a crash.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from curll.artifacts import empty_table, records
from curll.config.llm import MaxChars
from curll.draws import bottom_k
from curll.errors import CurllError
from curll.instances import TYPES, made_on, seeded
from curll.llm.engine import Engine
from curll.llm.tasks import Task, TaskDef, ask, provenance
from curll.schemas import RatingSchema

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


def unit_content(
    kind: str, fields: Mapping[str, str], blocks: Mapping[str, Sequence[tuple[str, str]]]
) -> str:
    """A unit's text: its seeded type's ``unit`` layout of ``fields`` (a passage's text; "Instruction:
    ...\nResponse: ..." for an IR pair), then a numbered block of (prompt, reply) items for every
    type made on it that has items (``blocks``: type -> items in q_index order), headed by that
    type's ``block`` title."""
    parts = [TYPES[kind].unit.format_map(fields)]
    for made in made_on(kind):
        if blocks.get(made):
            items = [f"{i}. {q}\n   -> {a}" for i, (q, a) in enumerate(blocks[made], 1)]
            parts.append("\n".join([f"{TYPES[made].block}:", *items]))
    return "\n\n".join(parts)


def unit_index(
    tables: Mapping[str, pd.DataFrame], sources: Mapping[str, str | Path] | None = None
) -> pd.DataFrame:
    """unit_id, type, stage and indicator_id of every unit, by unit_id, from the id columns
    (instance_id, stage, indicator_id) of the verified tables of every seeded type (``tables``:
    type -> its table; other types are left out); an id twice is a CurllError naming its tables
    (``sources``: type -> its file) and ``instance_id``."""
    cols = ["instance_id", "stage", "indicator_id"]
    df = pd.concat([tables[k][cols].assign(type=k) for k in seeded()], ignore_index=True)
    df = df.rename(columns={"instance_id": "unit_id"})[["unit_id", "type", "stage", "indicator_id"]]
    twice = df["unit_id"].duplicated(keep=False)
    if twice.any():
        unit = df.loc[twice, "unit_id"].iloc[0]
        kinds = sorted(set(df.loc[df["unit_id"] == unit, "type"]))
        where = " and ".join(str((sources or {}).get(k, k)) for k in kinds)
        raise CurllError(f"unit {unit} appears twice (in {where})", field="instance_id")
    return df.sort_values("unit_id").reset_index(drop=True)


def records_made(units: pd.DataFrame, qa: Iterable[tuple[str, str, int]]) -> dict[str, Counter[str]]:
    """unit_id -> the test items each unit of ``units`` (:func:`unit_index`) makes, by type: a unit
    of an evaluated seeded type one of its own (an IR pair: one ``ir``); a unit one per kept item
    of each evaluated type made on it (``qa``: (unit id, type, items), e.g.
    :meth:`~curll.split.workspace.Workspace.qa_counts`). A passage's own record is no test
    item, so it is not counted."""
    made = {
        u: Counter({t: 1} if TYPES[t].evaluated else {})
        for u, t in zip(units["unit_id"], units["type"], strict=True)
    }
    for unit, kind, n in qa:
        if unit in made and TYPES[kind].evaluated:
            made[unit][kind] += n
    return made


def build_units(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Units from the verified tables (keyed by every instance type), sorted by id."""
    rows = []
    for kind in seeded():
        t = TYPES[kind]
        on_it = {k: dict(tuple(tables[k].groupby(TYPES[k].link, sort=False))) for k in made_on(kind)}
        for r in records(tables[kind]):
            blocks = {}
            for k, groups in on_it.items():
                group = groups.get(r["instance_id"])
                if group is not None:
                    group = group.sort_values("q_index")
                    blocks[k] = list(zip(group[TYPES[k].prompt], group[TYPES[k].reply], strict=True))
            content = unit_content(kind, {c: r[c] for c in t.columns}, blocks)
            rows.append([r["instance_id"], kind, r["stage"], r["indicator_id"], content])
    df = pd.DataFrame(rows, columns=UNIT_COLUMNS)
    return df.sort_values("unit_id").reset_index(drop=True)


def rated_sample(units: pd.DataFrame, k: int, seed: int) -> pd.DataFrame:
    """The units to rate, in the units' order: at most ``k`` per (stage, indicator_id, type),
    a :func:`curll.draws.bottom_k` draw of their ``unit_id`` (independent of row order)."""
    return units[bottom_k(units, k, seed, key="unit_id", by=["stage", "indicator_id", "type"])]


def rate(units: pd.DataFrame, indicators: pd.DataFrame, engine: Engine, task: Task) -> pd.DataFrame:
    """One rating row per unit, in the units' order (RatingSchema's columns, rows or none)."""
    if units.empty:
        return empty_table(RatingSchema)
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
