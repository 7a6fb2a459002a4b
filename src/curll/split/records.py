"""Chat-format records (RecordSchema) from the verified instances and their unit's split.

Each record is one conversation ending in the assistant turn that is trained on (or, in
test, judged), laid out by its type's spec (:meth:`curll.instances.InstanceType.user_turn`,
:mod:`curll.chat`): a passage record asks for the passage; CQA and CSQA records put the
passage and the question in the user turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pandas as pd

from curll.artifacts import records
from curll.chat import record_chat
from curll.instances import TYPES, bases
from curll.schemas.quality import RECORD_ORDER

RECORD_COLUMNS = [
    "record_id", "unit_id", "stage", "indicator_id", "skill", "subskill", "indicator", "type", "split",
    "messages",
]  # fmt: skip


def record_frame(
    kind: str,
    rows: pd.DataFrame,
    split_of: Mapping[str, str],
    info: pd.DataFrame,
    passage: Callable[[str], str],
    *,
    system: str,
) -> pd.DataFrame:
    """Records (RECORD_COLUMNS, unsorted) for the instances of one type in ``rows`` whose unit
    has a split in ``split_of``; ``info``: skill, subskill and indicator by indicator_id;
    ``passage(id)``: a passage's text (the prompt of the records of a type made on it)."""
    t = TYPES[kind]
    out = []
    for row in records(rows):
        unit = row[t.link] if t.on else row["instance_id"]
        if unit not in split_of:
            continue
        user = t.user_turn(row, passage(unit) if t.on else "")
        meta = info.loc[row["indicator_id"]]
        out.append(
            [row["instance_id"], unit, row["stage"], row["indicator_id"], meta["skill"], meta["subskill"],
             meta["indicator"], kind, split_of[unit], record_chat(system, user, row[t.reply])]
        )  # fmt: skip
    return pd.DataFrame(out, columns=RECORD_COLUMNS)


def indicator_info(indicators: pd.DataFrame) -> pd.DataFrame:
    return indicators.set_index("indicator_id")[["skill", "subskill", "indicator"]]


def build_records(
    tables: dict[str, pd.DataFrame], units: pd.DataFrame, indicators: pd.DataFrame, *, system: str
) -> pd.DataFrame:
    """Records for every instance whose unit is in ``units`` (dropped units are left out), in
    memory, sorted by (stage, split, type, record_id) (the split stage streams the same)."""
    split_of = dict(zip(units["unit_id"], units["split"], strict=True))
    passages: dict[str, str] = {}
    for base in bases():
        passages |= dict(zip(tables[base]["instance_id"], tables[base][TYPES[base].reply], strict=True))
    info = indicator_info(indicators)
    parts = [
        record_frame(kind, tables[kind], split_of, info, lambda c: passages.get(c, ""), system=system)
        for kind in TYPES
    ]
    df = pd.concat(parts, ignore_index=True)
    return df.sort_values(list(RECORD_ORDER)).reset_index(drop=True)
