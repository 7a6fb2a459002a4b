"""Test items: what a trained model is asked, and what its judge needs to know.

:func:`build_items` turns the test split of the chat records (RecordSchema) into one row per
question: ``item_id`` (the record id), ``stage``, ``indicator_id``, ``skill``, ``subskill``,
``goal``, ``indicator``, ``age_group``, ``type`` (a test type: ir | cqa | csqa), ``system``,
``context`` (the passage of a type made on one; empty for IR), ``question`` (instruction or
question, as it follows the passage in the training user turn, less the label its type's
layout adds: CQA's ``Question: ``),
``reference`` (the generated answer), ``q_index`` (1-based among its passage's questions of
its type, in record-id order: the released records do not keep the generation order) and
``dropped`` (empty for an item that is asked; else why not, see :func:`drop_unfit`). A
passage's text comes from the passage record of the same unit, so the released records alone
are enough; :func:`curll.chat.user_turn` rebuilds the training user turn exactly.

:func:`fit_prompt` renders the chat prompt and, when it is longer than the limit, cuts the
end of the passage (token by token, marked with "..."), never the question or the
assistant marker that the chat template appends; a prompt that does not fit even so (a long
instruction or question) is None: such an item is dropped before any model answers it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from curll.artifacts import records as records_of
from curll.chat import CUT, question_of, turns_of
from curll.draws import bottom_k
from curll.instances import TYPES, bases
from curll.schemas.data import age_group

ITEM_COLUMNS = [
    "item_id", "stage", "indicator_id", "skill", "subskill", "goal", "indicator", "age_group", "type",
    "system", "context", "question", "reference", "q_index", "dropped",
]  # fmt: skip
#: the ``dropped`` reason of an item whose prompt is over the limit even with its passage cut
TOO_LONG = "prompt_too_long"


def build_items(
    records: pd.DataFrame, indicators: pd.DataFrame, types: tuple[str, ...], *, max_per_type: int, seed: int
) -> pd.DataFrame:
    """Test items of ``types``; at most ``max_per_type`` per stage and type (0: all), a
    :func:`curll.draws.bottom_k` draw of their ids with ``seed`` (the same records give the same
    items in any order; one record more changes at most one pick of its stage and type).
    A record whose indicator the taxonomy lacks (imported from a release) has no goal, and the
    age group of its stage (:func:`curll.schemas.data.age_group`)."""
    test = records[records["split"] == "test"].sort_values("record_id")
    passage_records = test[test["type"].isin(bases())]  # a passage record's assistant turn is its text
    passages = {r["unit_id"]: turns_of(r["messages"])[2] for r in records_of(passage_records)}
    info = indicators.set_index("indicator_id")[["goal", "age_group"]]
    rows: list[list[Any]] = []
    seen: dict[str, int] = {}
    for r in records_of(test[test["type"].isin(types)]):
        system, user, reference = turns_of(r["messages"])
        key = f"{r['unit_id']}/{r['type']}"
        on_passage = bool(TYPES[r["type"]].on)
        context = passages.get(r["unit_id"], "") if on_passage else ""
        question = question_of(r["type"], user, context)
        if on_passage:
            seen[key] = seen.get(key, 0) + 1
        known = r["indicator_id"] in info.index  # not when imported from a release with another taxonomy
        meta = info.loc[r["indicator_id"]] if known else {"goal": "", "age_group": age_group(int(r["stage"]))}
        rows.append([r["record_id"], r["stage"], r["indicator_id"], r["skill"], r["subskill"], meta["goal"],
                     r["indicator"], meta["age_group"], r["type"], system, context, question, reference,
                     seen.get(key, 1), ""])  # fmt: skip
    items = pd.DataFrame(rows, columns=ITEM_COLUMNS)
    if max_per_type:
        items = items[bottom_k(items, max_per_type, seed, key="item_id", by=["stage", "type"])]
    return items.sort_values(["stage", "type", "item_id"]).reset_index(drop=True)


def fit_prompt(
    item: dict[str, Any], tokenizer: Any, limit: int, layout: str = "curll"
) -> tuple[list[tuple[str, str]], bool] | None:
    """(messages, truncated): the item's chat in ``layout`` (:mod:`curll.evaluate.layouts`;
    ``tokenizer`` renders it with the layout's template) within ``limit`` prompt tokens, its
    passage cut if that is needed and enough; None when not even the question with no passage
    left fits."""
    from curll.evaluate.layouts import messages as in_layout

    def messages(item: dict[str, Any], context: str) -> list[tuple[str, str]]:
        return in_layout(layout, item, context)

    def length(context: str) -> int:
        chat = [{"role": r, "content": c} for r, c in messages(item, context)]
        text = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    full = str(item["context"])
    if length(full) <= limit:
        return messages(item, full), False
    if not full or length(CUT) > limit:  # nothing to cut, or too long with the passage all cut
        return None
    ids = tokenizer(full, add_special_tokens=False)["input_ids"]
    lo, hi = 0, len(ids)  # the longest kept prefix in [lo, hi) that fits: binary search
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if length(tokenizer.decode(ids[:mid]) + CUT) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return messages(item, tokenizer.decode(ids[:lo]) + CUT), True


def drop_unfit(items: pd.DataFrame, tokenizer: Any, limit: int, layout: str = "curll") -> pd.DataFrame:
    """``items`` with ``dropped`` set to :data:`TOO_LONG` where :func:`fit_prompt` finds no
    prompt within ``limit`` tokens in ``layout`` (the model was never trained at such positions)."""
    unfit = [fit_prompt(item, tokenizer, limit, layout) is None for item in records_of(items)]
    return items.assign(dropped=np.where(unfit, TOO_LONG, items["dropped"]))
