"""Prompt files: blocks, strict fields, versions, and every shipped prompt renders."""

from __future__ import annotations

from pathlib import Path

import pytest

from curll.errors import CurllError
from curll.prompts import load_prompt

ROOT = Path(__file__).resolve().parents[1]
ROW = {
    "explain": True,
    "indicator_id": "0123456789abcdef",
    "seed_id": "fedcba9876543210",
    "stage": 2,
    "age_group": "6-7",
    "skill": "Mathematics",
    "subskill": "Number",
    "goal": "Count",
    "indicator": "Counts to 100",
    "template": "a shopping list",
    "word": "apple",
    "pos": "Noun",
    "kind": "context",
    "min_items": 15,
    "max_items": 20,
    "min_words": 2,
    "max_words": 5,
    "context": "Once upon a time.",
    "n_pairs": 5,
    "type": "cqa",
    "content": "Some item.",
    "instruction": "Count the apples.",
    "question": "How many?",
    "reference": "Three.",
    "answer": "3",
    "q_index": 1,
    "reason": "because",
}
ROW_PAIRS = {"a": ROW, "b": ROW, "src": ROW, "dst": ROW}


@pytest.mark.parametrize("path", sorted((ROOT / "prompts").glob("*.j2")), ids=lambda p: p.name)
def test_every_shipped_prompt_renders_a_system_and_user_message(path):
    messages = load_prompt(path).render(**ROW, **ROW_PAIRS)
    assert [role for role, _ in messages] == ["system", "user"]
    assert all(len(text) > 40 for _, text in messages)
    assert "{{" not in messages[1][1] and "{%" not in messages[0][1]


def test_missing_field_names_the_prompt(write):
    path = write("p.j2", "{% block system %}hi{% endblock %}{% block user %}{{ word }}{% endblock %}")
    with pytest.raises(CurllError, match="'word' is undefined") as err:
        load_prompt(path).render(stage=1)
    assert err.value.file == str(path) and str(path) in str(err.value)


def test_bad_prompts_are_refused_with_file_and_line(write):
    with pytest.raises(CurllError, match="missing \\['user'\\]"):
        load_prompt(write("a.j2", "{% block system %}x{% endblock %}"))
    with pytest.raises(CurllError, match="syntax") as err:
        load_prompt(write("b.j2", "{% block system %}\n{% if %}{% endblock %}"))
    assert err.value.row == 2
    with pytest.raises(CurllError, match="not found"):
        load_prompt(write("c.j2", "").parent / "nope.j2")


def test_version_follows_the_file_content(write):
    text = "{% block system %}s{% endblock %}{% block user %}u {{ x }}{% endblock %}"
    a = load_prompt(write("a.j2", text))
    b = load_prompt(write("b.j2", text))
    c = load_prompt(write("c.j2", text + " "))
    assert a.version == b.version != c.version
    assert a.render(x=1) == [("system", "s"), ("user", "u 1")]


@pytest.mark.parametrize("path", sorted((ROOT / "prompts").glob("*.j2")), ids=lambda p: p.name)
def test_system_blocks_take_no_fields_so_every_request_shares_them(path):
    """A fixed system prompt is a token prefix all requests of a task share: the transformers
    backend computes it once per batch instead of once per request."""
    other = {k: (v + 1 if isinstance(v, int) else f"{v} changed") for k, v in ROW.items()}
    other["kind"] = "instruction"
    first = load_prompt(path).render(**ROW, **ROW_PAIRS)[0]
    second = load_prompt(path).render(**other, **dict.fromkeys(ROW_PAIRS, other))[0]
    assert first == second


def test_a_prompt_that_is_not_utf8_names_the_file_and_line(write):
    path = write("latin1.j2", "")
    path.write_bytes(
        "{% block system %}s{% endblock %}\n{% block user %}café{% endblock %}".encode("latin-1")
    )
    with pytest.raises(CurllError, match="not UTF-8") as err:
        load_prompt(path)
    assert err.value.file == str(path) and err.value.row == 2 and "\n" not in str(err.value)
