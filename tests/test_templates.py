"""Template stage filters: word counts, duplicates, short sets, and rejects kept with reasons."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from curll.config import load_params
from curll.llm.tasks import Task
from curll.prompts import load_prompt
from curll.sampling import Sampling
from curll.templates import check_items, make_templates, templates_schema
from tests.fakes import engine

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def p():
    return load_params(ROOT / "params.yaml").templates.model_copy(update={"min_items": 3, "max_items": 5})


def test_check_items_rejects_bad_words_and_duplicates(p):
    checked = check_items(
        ["a story", "A  Story", "x", "one two three four five six", "a letter", "a diary"], p
    )
    assert [r for _, r in checked] == [
        "",
        "duplicate of item 0",
        "not 2-5 plain words",
        "not 2-5 plain words",
        "",
        "",
    ]
    assert checked[1][0] == "A Story"  # white space normalised


def test_a_short_set_is_rejected_whole_and_never_padded(p):
    checked = check_items(["a story", "a story", "x y"], p)
    assert all(r for _, r in checked)
    assert "fewer than min_items=3" in checked[0][1]


def test_make_templates_keeps_rejects_with_reason(p):
    ind = pd.DataFrame(
        {
            "indicator_id": ["a" * 16, "b" * 16],
            "stage": [0, 1],
            "age_group": ["0-5", "5-6"],
            "skill": ["s"] * 2,
            "subskill": ["u"] * 2,
            "goal": ["g"] * 2,
            "indicator": ["i1", "i2"],
        }
    )

    def answer(req):
        if "i2" in req.messages[1].content:
            return "not json"
        return {"text_types": ["a story", "a poem", "a poem", "a short letter"]}

    eng, backend = engine(answer)
    task = Task(load_prompt(ROOT / "prompts/templates.j2"), templates_schema(p), Sampling())
    accepted, rejects, stats = make_templates(ind, eng, task, p)
    # 2 indicators x 2 kinds, and the bad one asked again up to templates.attempts
    assert len(backend.asked) == 4 + 2 * (p.attempts - 1)
    assert set(accepted["template"]) == {"a story", "a poem", "a short letter"}
    assert (accepted["indicator_id"] == "a" * 16).all()
    dup = rejects[rejects["reason"].str.startswith("duplicate")]
    assert len(dup) == 2  # one per kind
    failed = rejects[rejects["item"] == -1]
    assert len(failed) == 2 and failed["reason"].str.startswith("invalid JSON").all()
    assert stats["rejected_items"] == 4


def test_placeholders_and_copies_of_the_prompt_are_rejected(p):
    items = ["format one", "Format Two", "a text type", "an example", "a bedtime story"]
    items += ["a riddle", "a recipe card", "a weather report", "retell the story"]
    checked = dict(check_items(items, p, avoid={"A bedtime story", "Retell the story"}))
    assert all(
        checked[t].startswith("placeholder")
        for t in ("format one", "Format Two", "a text type", "an example")
    )
    assert checked["a bedtime story"].startswith("echo") and checked["retell the story"].startswith("echo")
    assert checked["a riddle"] == checked["a recipe card"] == checked["a weather report"] == ""


def test_a_model_that_copies_the_prompt_yields_nothing_and_says_why(p):
    """What SmolLM2 did with the old prompt: it returned the example list it was shown."""
    row = {
        "indicator_id": "a" * 16,
        "stage": 0,
        "age_group": "5-6",
        "skill": "s",
        "subskill": "u",
        "goal": "g",
    }
    ind = pd.DataFrame([{**row, "indicator": "Retells a story in order"}])
    eng, _ = engine(lambda req: {"text_types": ["format one", "format two", "format three", "format four"]})
    task = Task(load_prompt(ROOT / "prompts/templates.j2"), templates_schema(p), Sampling())
    accepted, rejects, stats = make_templates(ind, eng, task, p)
    assert accepted.empty and rejects["reason"].str.startswith("placeholder").all()
    assert stats["yields"]["context"]["0"]["yield"] == 0.0
    from curll.yields import YieldError, check_yields

    with pytest.raises(YieldError, match=r"stage 0 context: 0 of 1 kept .*; placeholder 1 \(e\.g\.") as err:
        check_yields("templates", stats["yields"], p.min_yield, key="templates.min_yield")
    assert err.value.field == "templates.min_yield"


def test_invented_words_and_fragments_of_the_indicator_are_rejected(p):
    """What SmolLM2 writes under a letters-only grammar with a repetition penalty."""
    items = ["storybooksdress stories", "jsonpJSONSrPbZM data", "Sorts flat shapes by the",
             "a colour chart", "a picture book", "a diary entry"]  # fmt: skip
    checked = dict(check_items(items, p, avoid={"Sorts flat shapes by the number of sides and corners"}))
    assert checked["storybooksdress stories"].startswith("not_words: 'storybooksdress'")
    assert checked["jsonpJSONSrPbZM data"].startswith("not_words")
    assert checked["Sorts flat shapes by the"].startswith("echo")
    assert checked["a colour chart"] == checked["a picture book"] == checked["a diary entry"] == ""


def test_the_dictionary_check_follows_the_profile(p):
    """Random weights write no English words: the embedded profile turns the check off (the
    other checks stay), every other profile keeps it."""
    assert p.dictionary.for_profile("embedded") is False and p.dictionary.for_profile("smollm2") is True
    items = ["storybooksdress stories", "a story", "a story", "a poem"]
    assert dict(check_items(items, p))["storybooksdress stories"].startswith("not_words")
    checked = dict(check_items(items, p, dictionary=False))
    assert checked["storybooksdress stories"] == "" and checked["a story"].startswith("duplicate")
