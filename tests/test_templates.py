"""Template stage filters: word counts, duplicates, short sets, and rejects kept with reasons."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from curll.config import load_params
from curll.llm import Sampling
from curll.llm.tasks import Task
from curll.prompts import load_prompt
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
    assert len(backend.asked) == 4 + 2  # 2 indicators x 2 kinds, and the bad one asked twice
    assert set(accepted["template"]) == {"a story", "a poem", "a short letter"}
    assert (accepted["indicator_id"] == "a" * 16).all()
    dup = rejects[rejects["reason"].str.startswith("duplicate")]
    assert len(dup) == 2  # one per kind
    failed = rejects[rejects["item"] == -1]
    assert len(failed) == 2 and failed["reason"].str.startswith("invalid JSON").all()
    assert stats["rejected_items"] == 4
