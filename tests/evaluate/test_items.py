"""Test items from released records, and prompt truncation that keeps the question."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from curll.artifacts import records as records_of
from curll.chat import CUT, user_turn
from curll.draws import seeded_key
from curll.evaluate.items import TOO_LONG, build_items, drop_unfit, fit_prompt
from curll.llm.bpe import train_bpe
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
            "csqa",
            ctx,
            {
                "c0": [
                    ("Retell it in one line.\n\nUse your words.", "A cat waited."),
                    ("Question: which word rhymes with 'cat'?", "Mat."),
                ]
            },
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
    assert sorted(items["type"]) == ["cqa", "cqa", "csqa", "csqa", "ir", "ir"]  # passages are not test items
    cqa = items[items["type"] == "cqa"].sort_values("q_index")
    assert set(cqa["question"]) == {"Where did the cat sit?", "Why?"} and cqa["q_index"].tolist() == [1, 2]
    assert (cqa["context"] == PASSAGE).all() and set(cqa["reference"]) == {"By the door.", "Rain."}
    csqa = items[items["type"] == "csqa"].sort_values("question").iloc[1]
    assert (
        csqa["question"] == "Retell it in one line.\n\nUse your words."
    )  # blank lines in a question survive
    assert set(items[items["type"] == "ir"]["context"]) == {""} and (items["system"] == "Be kind.").all()
    assert items["goal"].eq("Understand stories").all() and items["age_group"].eq("5-6").all()


def test_an_item_whose_indicator_the_taxonomy_lacks_gets_its_stages_age_and_no_goal():
    """Records imported from a release with another taxonomy: the judges still see an age."""
    recs = records()
    recs.loc[recs["stage"] == 0, "indicator_id"] = "f" * 16  # an indicator the taxonomy does not list
    items = build_items(recs, inst.indicators(["i0", "i1"]), ("ir", "cqa"), max_per_type=0, seed=1)
    assert len(items) == 4 and items["goal"].eq("").all()
    assert items["age_group"].eq("0-5").all()  # stage 0's ages, where the taxonomy gives 5-6


def test_every_item_asks_exactly_its_training_user_turn():
    """A CSQA question that itself begins "Question: " lost the label (removed for every type,
    put back only for CQA), so the test prompt differed from the trained one."""
    recs = records()
    items = build_items(recs, inst.indicators(["i0", "i1"]), ("ir", "cqa", "csqa"), max_per_type=0, seed=1)
    trained = {r: next(m for m in json.loads(msgs) if m["role"] == "user")["content"]
               for r, msgs in zip(recs["record_id"], recs["messages"], strict=True)}  # fmt: skip
    for item in records_of(items):
        assert user_turn(item["type"], item["question"], item["context"]) == trained[item["item_id"]], item[
            "type"
        ]
    assert "Question: which word rhymes with 'cat'?" in set(items["question"])


def test_max_per_type_is_a_seeded_sample_per_stage_and_type():
    recs = records()
    one = build_items(recs, inst.indicators(["i0", "i1"]), ("ir", "cqa"), max_per_type=1, seed=3)
    assert one.groupby(["stage", "type"]).size().max() == 1 and len(one) == 2
    again = build_items(recs.iloc[::-1], inst.indicators(["i0", "i1"]), ("ir", "cqa"), max_per_type=1, seed=3)
    pd.testing.assert_frame_equal(one, again)  # the records' order does not change the draw
    every = build_items(recs, inst.indicators(["i0", "i1"]), ("ir", "cqa"), max_per_type=0, seed=3)
    groups = every.groupby(["stage", "type"])["item_id"]
    smallest = {min(ids, key=lambda i: seeded_key(3, i)) for _, ids in groups}
    assert set(one["item_id"]) == smallest  # a bottom-k draw: one item more changes at most one pick


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
    fitted = fit_prompt(item, tok, 10_000)
    assert fitted is not None
    full = length(tok, fitted[0])
    cut_to = fit_prompt(item, tok, full - 50)
    assert cut_to is not None
    msgs, cut = cut_to
    chat = [{"role": r, "content": c} for r, c in msgs]
    rendered = tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    assert cut and rendered.rstrip().endswith("<|im_start|>assistant")  # the assistant marker stays
    user = msgs[-1][1]
    assert user.endswith(f"{CUT}\n\nQuestion: Where did the cat sit?") and user.startswith("word0 word1")
    assert full - 60 <= length(tok, msgs) <= full - 50  # as much passage as fits
    assert fit_prompt(item, tok, full) == (fitted[0], False)  # fits: untouched


def test_an_item_that_cannot_fit_is_dropped_before_anyone_answers(tok):
    """It used to be sent anyway (the shortest version, past the positions the model was trained on)."""
    long_ir = {
        "item_id": "a",
        "type": "ir",
        "system": "",
        "question": " ".join(["word"] * 300),
        "context": "",
    }
    long_qa = {"item_id": "b", "type": "cqa", "system": "", "question": "Where did the cat sit?",
               "context": " ".join(f"word{i}" for i in range(400))}  # fmt: skip
    short = {"item_id": "c", "type": "ir", "system": "", "question": "Name a colour.", "context": ""}
    whole = fit_prompt(short, tok, 10_000)
    assert whole is not None
    limit = length(tok, whole[0]) + 40
    assert fit_prompt(long_ir, tok, limit) is None
    assert fit_prompt({**long_qa, "question": long_ir["question"]}, tok, limit) is None  # even cut to nothing
    fitted = fit_prompt(long_qa, tok, limit)
    assert fitted is not None and fitted[1] and length(tok, fitted[0]) <= limit
    items = pd.DataFrame([long_ir, long_qa, short]).assign(dropped="")
    assert drop_unfit(items, tok, limit)["dropped"].tolist() == [TOO_LONG, "", ""]
