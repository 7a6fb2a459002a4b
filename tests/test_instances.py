"""The instance-type specs (:mod:`curll.instances`): the chat layout of each type read back, and
a spec the stages could not handle refused when it is made, naming what is wrong."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from curll import instances
from curll.chat import question_of, user_turn
from curll.instances import TYPES, InstanceType

CQA = TYPES["cqa"]


def test_a_user_turn_is_read_back_to_its_question():
    for kind, passage in (("cqa", "A cat sat.\n\nOn a mat."), ("csqa", "P"), ("ir", "")):
        for question in ("Why?", "Question: why?", "{x} and braces"):
            turn = user_turn(kind, question, passage)
            assert question_of(kind, turn, passage) == question, (kind, question)
    assert user_turn("cqa", "Why?", "P") == "P\n\nQuestion: Why?"
    assert question_of("cqa", "not on the passage", "P") == "not on the passage"
    assert instances.bases() == ("context",) and instances.made_on("context") == ("cqa", "csqa")
    assert instances.seeded() == ("context", "ir") and instances.evaluated() == ("ir", "cqa", "csqa")


@pytest.mark.parametrize(
    "change, problem",
    [
        ({"pairs": ""}, "needs pairs"),  # made on a passage, but no list
        ({"on": "", "template_kind": "instruction"}, "needs pairs"),  # a list with no passage
        ({"template_kind": "context"}, "exactly one of template_kind"),
        ({"block": ""}, "needs pairs"),  # no heading in the passage unit
        ({"answer": ("question",)}, "one key per column"),
        ({"long": ("nope",)}, "one key per column"),
        ({"reply": "nope"}, "must be columns"),
        ({"user": "{passage}\n\n{question} (true or false?)"}, "must end with {question}"),
        ({"user": "{passage}\n\n{answer}: {question}"}, "must end with {question}"),
        ({"user": "Question: {question}"}, "must start with {passage}"),
    ],
)
def test_a_spec_the_stages_cannot_handle_is_refused(change: dict[str, Any], problem: str):
    with pytest.raises(ValueError, match=problem):
        dataclasses.replace(CQA, name="toy", **change)


def test_a_type_is_made_on_a_registered_seeded_type_only():
    toy = dataclasses.replace(CQA, name="toy", on="cqa")
    with pytest.raises(ValueError, match="not a registered seeded type"), instances.register(toy):
        pass
    assert "toy" not in TYPES
    with pytest.raises(ValueError, match="already registered"), instances.register(CQA):
        pass


def test_a_seeded_type_needs_its_unit_text():
    with pytest.raises(ValueError, match="needs unit"):
        dataclasses.replace(TYPES["ir"], name="toy", unit="")
    assert isinstance(dataclasses.replace(TYPES["ir"], name="toy"), InstanceType)
