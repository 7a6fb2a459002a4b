"""Test items from released records, and prompt truncation that keeps the question."""

from __future__ import annotations

import pandas as pd
import pytest

from curll.evaluate.items import CUT, build_items, fit_prompt
from curll.llm.embedded import train_bpe
from curll.schemas.evaluate import ItemSchema
from curll.split.records import build_records
from tests import instances as inst

PASSAGE = "The cat sat by the door.\n\nIt waited for the rain to stop."


def records() -> pd.DataFrame:
    ctx = inst.contexts([("c0", 0, "i0", PASSAGE), ("c1", 1, "i1", "A dog ran home.")])
    tables = {
        "context": ctx,
        "ir": inst.ir(
            [("r0", 0, "i0", "Name a colour.", "Red."), ("r1", 0, "i0", "Count to two.", "One, two.")]
        ),
        "cqa": inst.qa("cqa", ctx, {"c0": [("Where did the cat sit?", "By the door."), ("Why?", "Rain.")]}),
        "csqa": inst.qa(
            "csqa", ctx, {"c0": [("Retell it in one line.\n\nUse your words.", "A cat waited.")]}
        ),
    }
    ids = [*ctx["instance_id"], *tables["ir"]["instance_id"]]
    units = pd.DataFrame({"unit_id": ids, "split": "test"})
    return build_records(tables, units, inst.indicators(["i0", "i1"]), system="Be kind.")


def test_items_recover_passage_question_and_reference():
    items = build_items(
        records(), inst.indicators(["i0", "i1"]), ("ir", "cqa", "csqa"), max_per_type=0, seed=1
    )
    ItemSchema.validate(items)
    assert sorted(items["type"]) == ["cqa", "cqa", "csqa", "ir", "ir"]  # passages are not test items
    cqa = items[items["type"] == "cqa"].sort_values("q_index")
    assert set(cqa["question"]) == {"Where did the cat sit?", "Why?"} and cqa["q_index"].tolist() == [1, 2]
    assert (cqa["context"] == PASSAGE).all() and set(cqa["reference"]) == {"By the door.", "Rain."}
    csqa = items[items["type"] == "csqa"].iloc[0]
    assert (
        csqa["question"] == "Retell it in one line.\n\nUse your words."
    )  # blank lines in a question survive
    assert set(items[items["type"] == "ir"]["context"]) == {""} and (items["system"] == "Be kind.").all()
    assert items["goal"].eq("Understand stories").all() and items["age_group"].eq("5-6").all()


def test_max_per_type_is_a_seeded_sample_per_stage_and_type():
    recs = records()
    one = build_items(recs, inst.indicators(["i0", "i1"]), ("ir", "cqa"), max_per_type=1, seed=3)
    assert one.groupby(["stage", "type"]).size().max() == 1 and len(one) == 2
    again = build_items(recs, inst.indicators(["i0", "i1"]), ("ir", "cqa"), max_per_type=1, seed=3)
    pd.testing.assert_frame_equal(one, again)


@pytest.fixture(scope="module")
def tok():
    return train_bpe([PASSAGE * 3, "Where did the cat sit? Question: answer"], 300)


def length(tok, msgs) -> int:
    text = tok.apply_chat_template([{"role": r, "content": c} for r, c in msgs], add_generation_prompt=True,
                                   tokenize=False)  # fmt: skip
    return len(tok(text, add_special_tokens=False)["input_ids"])


def test_a_long_prompt_loses_the_end_of_its_passage_never_the_question(tok):
    item = {"type": "cqa", "system": "Be kind.", "question": "Where did the cat sit?",
            "context": " ".join(f"word{i}" for i in range(400))}  # fmt: skip
    full = length(tok, fit_prompt(item, tok, 10_000)[0])
    msgs, cut = fit_prompt(item, tok, full - 50)
    chat = [{"role": r, "content": c} for r, c in msgs]
    rendered = tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    assert cut and rendered.rstrip().endswith("<|im_start|>assistant")  # the assistant marker stays
    user = msgs[-1][1]
    assert user.endswith(f"{CUT}\n\nQuestion: Where did the cat sit?") and user.startswith("word0 word1")
    assert full - 60 <= length(tok, msgs) <= full - 50  # as much passage as fits
    assert fit_prompt(item, tok, full) == (fit_prompt(item, tok, 10_000)[0], False)  # fits: untouched
