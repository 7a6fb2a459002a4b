"""Content checks: each filter drops a planted bad row with its reason and keeps a good one,
and the rates per stage and type are reported."""

from __future__ import annotations

import pandas as pd
import pytest

from curll.artifacts import validate
from curll.config import load_params
from curll.config.verify import ContentChecks, WordRange
from curll.schemas import GenerationSchema, RejectSchema
from curll.verify.content import grounding, has_word, repeated_ngrams, same_text, stem, stems
from curll.verify.screen import Settings
from harness.verify import verify
from tests import instances as inst
from tests.verify.conftest import PASSAGES

LOOP = "The puppy was happy and the puppy was happy " * 8
STORM = (
    "Dark clouds filled the sky and the wind began to blow. Rain fell on the roof and thunder rolled "
    "over the hills. After the storm, a rainbow appeared and the puddles shone in the sun."
)
TOPICS = {  # the coins indicator and others of a taxonomy
    "coins": "Counting coins and adding their values: Count coins to find how much money you have.",
    "weather": "Observing weather: Describe rain, wind and storms and how they change the sky.",
    "pets": "Caring for animals: Explain how to look after a pet dog or cat.",
    "plants": "Growing plants: Describe how seeds grow into plants with water and light.",
    "shapes": "Naming shapes: Name circles, squares and triangles in everyday objects.",
}


def test_word_forms_and_measures():
    assert stem("stories") == stem("story") and stem("running") == stem("run") and stem("bees") == stem("bee")
    assert has_word("They planted two gardens.", "garden") and has_word("We made ice creams", "ice cream")
    assert not has_word("She went home.", "go")  # irregular forms are not found: errs towards dropping
    assert repeated_ngrams(LOOP, 3) > 0.5 and repeated_ngrams(PASSAGES[0], 3) == 0.0
    assert same_text("What did Mia find?", "what did mia find") and not same_text(
        "What did Mia find?", "A puppy."
    )
    assert grounding("Mia found a small puppy.", PASSAGES[0]) == 1.0
    assert grounding("A dragon ate the moon.", PASSAGES[0]) == 0.0
    assert grounding("Yes.", PASSAGES[0]) == 1.0  # nothing to check
    half = "Mia found a dragon."  # mia, found: in the passage; dragon: not
    assert grounding(half, stems(PASSAGES[0])) == grounding(half, PASSAGES[0]) == 2 / 3


@pytest.fixture(scope="module")
def result(encoder):
    def with_word(df: pd.DataFrame, words: dict[str, str]) -> pd.DataFrame:
        df["word"] = [words.get(i, "cat") for i in df["instance_id"]]
        return df

    ctx = with_word(
        inst.contexts(
            [
                ("good", 0, "coins", PASSAGES[2]),  # about coins, has its word
                ("noword", 0, "coins", PASSAGES[2].replace("apple", "pear")),
                ("loop", 0, "coins", LOOP),
                ("off", 0, "coins", STORM),  # a weather text, seeded for the coins indicator
                ("notopic", 0, "coins", PASSAGES[0]),  # its expanded_topic blanked below
            ]
        ).assign(
            expanded_topic=lambda d: d["expanded_topic"].where(
                d["instance_id"] != inst.hx("notopic"), " \u200f"
            )
        ),
        {
            inst.hx("good"): "apple",
            inst.hx("noword"): "apple",
            inst.hx("loop"): "puppy",
            inst.hx("off"): "storm",
        },
    )
    ir = with_word(
        inst.ir(
            [
                ("r-good", 0, "coins", "How many cents are two dimes?", "Two dimes make twenty cents."),
                ("r-echo", 0, "coins", "How many cents are two dimes?", "how many cents are two dimes"),
                ("r-short", 0, "coins", "dime", "A dime is ten cents."),  # the bare seed word
                (
                    "r-other",
                    0,
                    "coins",
                    "Quanti centesimi fanno due monete da dieci centesimi?",
                    "Due monete da dieci centesimi fanno venti centesimi.",
                ),  # not English
                (
                    "r-zh",
                    0,
                    "coins",
                    "How many cents are two dimes and a nickel?",
                    "两个一角硬币是二十美分。",
                ),
                ("r-rlm", 0, "coins", "How many cents are three dimes?", "\u200f\u00ad"),  # shows nothing
                ("r-dots", 0, "coins", "How many cents are four dimes?", "..."),
            ]
        ),
        {inst.hx(k): "dime" for k in ("r-good", "r-echo", "r-short", "r-other", "r-zh", "r-rlm", "r-dots")},
    )
    pairs = [("Who taught Leo?", "Grandpa taught Leo to count coins."),
             ("What did Leo buy?", "A spaceship from the moon base.")]  # fmt: skip
    cqa = inst.qa("cqa", ctx, {"good": pairs})
    csqa = inst.qa("csqa", ctx, {"good": [("Add the coins.", "Add the coins.")]})
    gens = pd.DataFrame(columns=list(GenerationSchema.to_schema().columns)).astype(
        {"stage": "int64", "attempts": "int64", "prompt_tokens": "int64", "completion_tokens": "int64"}
    )
    checks = ContentChecks(seed_word=True, grounded=0.5, on_topic=0.7, ngram=3, max_repeated=0.2,
                           min_prompt_words=3, english=0.8)  # fmt: skip
    topics = {inst.hx(k): v for k, v in TOPICS.items()}
    p = load_params().verify.model_copy(update={"min_yield": 0.0})  # tiny tables: yields are not the point
    tables = {"context": ctx, "ir": ir, "cqa": cqa, "csqa": csqa}
    settings = Settings(p, words=WordRange(min=5, max=500), qa_pairs={"cqa": 2, "csqa": 1}, checks=checks,
                        topics=topics)  # fmt: skip
    return verify(tables, gens, encoder, settings)


def reasons(result, kind: str) -> dict[str, str]:
    rej = result.rejects[result.rejects["type"] == kind]
    return dict(zip(rej["id"], rej["reason"], strict=True))


def test_each_content_filter_drops_its_planted_row(result):
    validate(result.rejects, RejectSchema, source="rejects")  # every reason is one the schema knows
    assert reasons(result, "context") == {
        inst.hx("noword"): "seed_word",
        inst.hx("loop"): "degenerate",
        inst.hx("off"): "off_topic",
        inst.hx("notopic"): "empty",  # the topic a record's user turn quotes: blank to a reader
    }
    assert set(result.kept["context"]["instance_id"]) == {inst.hx("good")}
    assert reasons(result, "ir") == {
        inst.hx("r-echo"): "degenerate",
        inst.hx("r-short"): "short_prompt",
        inst.hx("r-other"): "not_english",
        inst.hx("r-zh"): "not_english",  # another script: pooled with the question it was 8 of 9 words
        inst.hx("r-rlm"): "empty",  # direction marks and a soft hyphen alone
        inst.hx("r-dots"): "empty",  # punctuation alone
    }
    cqa = result.rejects[result.rejects["type"] == "cqa"]
    assert cqa["reason"].tolist() == ["ungrounded"] and "spaceship" not in " ".join(
        result.kept["cqa"]["answer"]
    )
    assert reasons(result, "csqa") == {
        inst.hx("csqa" + "good" + "1"): "degenerate"
    }  # response == instruction


def test_content_rates_are_reported_per_type_and_stage(result):
    c = result.metrics["content"]
    assert c["context"]["0"]["n"] == 4
    assert c["context"]["0"]["seed_word"] == 0.75  # all but "noword"
    assert c["context"]["0"]["degenerate"] == 0.25
    assert c["context"]["0"]["on_topic"] < 1.0 and c["context"]["0"]["on_topic_mean"] is not None
    assert c["cqa"]["0"]["grounded"] == 0.5
    # 5 IR rows reach the checks (the two empty ones do not): one loops, two are not English
    assert c["ir"]["0"]["n"] == 5 and c["ir"]["0"]["degenerate"] == 0.2 and c["ir"]["0"]["english"] == 0.6
