"""Generation-time checks: what asking again can fix is asked again, with verify's thresholds."""

from __future__ import annotations

from curll.generate.tasks import engine_check, form
from curll.llm.types import ChatRequest


def test_form_fails_a_bare_seed_word_or_another_language_and_a_qa_set_only_when_no_pair_passes():
    ok_ir = {"instruction": "How many legs has a dog?", "response": "A dog has four legs."}
    assert form("ir", ok_ir, 3, 0.8) is None
    bare = {"instruction": "sleep", "response": "What I am doing is to help people."}
    assert (form("ir", bare, 3, 0.8) or "").startswith("short_prompt")
    italian = {"instruction": "Quanti centesimi fanno due monete?", "response": "Fanno venti centesimi."}
    assert (form("ir", italian, 3, 0.8) or "").startswith("not_english")
    assert form("ir", italian, 3, 0.0) is None and form("ir", bare, 1, 0.0) is None  # off
    good = {"instruction": "Sort the shapes by sides.", "response": "Triangle, square, pentagon."}
    pairs = [{"instruction": "Question 1", "response": "Question 2"}, good]
    assert form("csqa", {"skill_based_pairs": pairs}, 3, 0.8) is None  # one good pair: verify drops the other
    assert (form("csqa", {"skill_based_pairs": pairs[:1]}, 3, 0.8) or "").startswith("short_prompt")
    assert (form("context", {"expanded_topic": "x", "generated_text": "La scuola di Bologna"}, 3, 0.8) or
            "").startswith("not_english")  # fmt: skip


def test_the_engine_check_runs_form_after_the_empty_and_echo_checks():
    req = ChatRequest.build([("user", "Write one exercise about dogs.")])
    check = engine_check("ir", min_prompt_words=3, english=0.8)
    assert (check(req, {"instruction": "dog", "response": "A dog barks."}) or "").startswith("short_prompt")
    assert check(req, {"instruction": "", "response": "A dog barks."}) == "empty instruction"
    assert engine_check("ir")(req, {"instruction": "dog", "response": "A dog barks."}) is None  # defaults off
