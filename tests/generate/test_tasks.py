"""Generation-time checks: what asking again can fix is asked again, with verify's thresholds."""

from __future__ import annotations

import pandas as pd
import pytest

from curll.config.verify import ContentChecks
from curll.generate.tasks import engine_check, form
from curll.llm.types import ChatRequest
from curll.verify.content import degenerate, text_check
from curll.verify.content_table import check_table, flags


def checks(words: int = 3, english: float = 0.8, repeated: float = 0.3) -> ContentChecks:
    return ContentChecks(seed_word=False, grounded=0, on_topic=0, ngram=3, max_repeated=repeated,
                         min_prompt_words=words, english=english)  # fmt: skip


def test_form_fails_a_bare_seed_word_or_another_language_and_a_qa_set_only_when_no_pair_passes():
    ok_ir = {"instruction": "How many legs has a dog?", "response": "A dog has four legs."}
    assert form("ir", ok_ir, checks()) is None
    bare = {"instruction": "sleep", "response": "What I am doing is to help people."}
    assert (form("ir", bare, checks()) or "").startswith("short_prompt")
    italian = {"instruction": "Quanti centesimi fanno due monete?", "response": "Fanno venti centesimi."}
    assert (form("ir", italian, checks()) or "").startswith("not_english")
    assert (
        form("ir", italian, checks(english=0)) is None
        and form("ir", bare, checks(words=1, english=0)) is None
    )
    good = {"instruction": "Sort the shapes by sides.", "response": "Triangle, square, pentagon."}
    pairs = [{"instruction": "Question 1", "response": "Question 2"}, good]
    assert (
        form("csqa", {"skill_based_pairs": pairs}, checks()) is None
    )  # one good pair: verify drops the other
    assert (form("csqa", {"skill_based_pairs": pairs[:1]}, checks()) or "").startswith("short_prompt")
    assert (form("context", {"expanded_topic": "x", "generated_text": "La scuola di Bologna"}, checks()) or
            "").startswith("not_english")  # fmt: skip
    assert form("ir", bare, None) is None  # no thresholds: no content checks


def test_a_looping_passage_is_asked_again_for_the_reason_verify_would_drop_it():
    """SmolLM2 loops in about half of its passages; verify used to drop them after their
    questions had been generated. The same test, with verify's thresholds, now runs first."""
    loop = "Tom has a red ball. " + "He likes to play with the ball every day. " * 6
    passage = {"expanded_topic": "A boy and his ball", "generated_text": loop}
    why = form("context", passage, checks())
    assert why is not None and why.startswith("degenerate: text repeats itself")
    assert why == str(degenerate({"expanded_topic": passage["expanded_topic"], "text": loop}, n=3, limit=0.3,
                                 pair=("expanded_topic", "text")))  # fmt: skip
    assert form("context", passage, checks(repeated=1.0)) is None  # max_repeated 1: off
    echo = {"instruction": "Name three red fruits.", "response": "Name three red fruits."}
    assert (form("ir", echo, checks()) or "").startswith("degenerate: the response repeats the instruction")


def test_the_engine_check_runs_form_after_the_empty_and_echo_checks():
    req = ChatRequest.build([("user", "Write one exercise about dogs.")])
    check = engine_check("ir", checks=checks())
    assert (check(req, {"instruction": "dog", "response": "A dog barks."}) or "").startswith("short_prompt")
    assert check(req, {"instruction": "", "response": "A dog barks."}) == "empty instruction"
    assert engine_check("ir")(req, {"instruction": "dog", "response": "A dog barks."}) is None  # defaults off


PROMPTS = [  # (prompt, reply): fine, a bare seed word, another language, an echo, a loop, blank
    ("How many legs has a dog?", "A dog has four legs."),
    ("sleep", "What I am doing is to help people."),
    ("Quanti centesimi fanno due monete?", "Fanno venti centesimi."),
    ("Name three red fruits.", "Name three red fruits."),
    ("Tell me about the ball.", "He likes to play with the ball every day. " * 6),
    ("Question 1", "   "),
]
QA_LISTS = {"cqa": "question_answer_pairs", "csqa": "skill_based_pairs"}


@pytest.mark.parametrize("kind", ["ir", "cqa", "csqa"])
def test_form_rejects_with_the_reason_verify_drops_the_same_texts_with(kind):
    """One implementation: a retry's reason is verify's drop (code and detail) for the same
    texts with the same thresholds, or None where verify keeps them."""
    q, a = ("instruction", "response") if kind == "ir" else ("question", "answer")
    texts = {q: [p for p, _ in PROMPTS], a: [r for _, r in PROMPTS]}
    table = pd.DataFrame({"instance_id": [f"{i}" for i in range(len(PROMPTS))], "word": "dog",
                          "context_id": "c", **texts})  # fmt: skip
    measured = check_table(kind, table, passages={}, topic_scores=None, checks=checks())
    dropped = flags(kind, table, measured, checks())
    keys = {"ir": ("instruction", "response"), "cqa": ("question", "answer"),
            "csqa": ("instruction", "response")}  # fmt: skip
    reasons = []
    for prompt, reply in PROMPTS:
        pair = dict(zip(keys[kind], (prompt, reply), strict=True))
        reasons.append(form(kind, pair if kind == "ir" else {QA_LISTS[kind]: [pair]}, checks()))
    assert reasons == [str(dropped[i]) if i in dropped else None for i in table["instance_id"]]
    assert reasons[0] is None and None not in reasons[1:]
    assert reasons[1] == f"short_prompt: the {q} has 1 word (minimum 3)"  # verify's wording


def test_a_passage_is_measured_for_english_without_its_topic_as_generate_always_did():
    topic, text = "Quanti centesimi fanno due monete", "A dog has four legs and a tail."
    passage = {"expanded_topic": topic, "text": text}
    assert form("context", {"expanded_topic": passage["expanded_topic"], "generated_text": passage["text"]},
                checks()) is None  # fmt: skip
    assert str(text_check("context", passage, checks())).startswith("not_english")  # verify: topic and text
