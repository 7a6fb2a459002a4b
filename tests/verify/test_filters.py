"""Every check keeps a row (None) or drops it with a Drop, and the rejects take its code and
detail as they are: nothing is joined into one string and split again."""

from __future__ import annotations

import pytest

from curll import instances as inst_types
from curll.config.verify import ContentChecks
from curll.schemas.quality import VERIFY_REASONS
from curll.verify import filters as flt
from curll.verify.checks import CHECKS, verdict
from curll.verify.content import degenerate
from curll.verify.verdict import Drop
from tests import instances as inst


def test_a_drop_carries_a_known_code_and_its_detail():
    gone = Drop("words", "3 not in [10, 500]")
    assert (gone.code, gone.detail, str(gone)) == ("words", "3 not in [10, 500]", "words: 3 not in [10, 500]")
    with pytest.raises(ValueError, match="unknown verify reason 'too_short'"):
        Drop("too_short", "3 words")


def test_row_filters_and_content_checks_keep_with_none_and_drop_with_a_reason():
    row = {"text": "one two three", "instruction": " ", "response": "ok"}
    assert flt.not_empty("text")(row) is None and flt.word_range("text", 1, 3)(row) is None
    assert flt.not_empty("instruction", "response")(row) == Drop("empty", "instruction")
    assert flt.word_range("text", 5, 9)(row) == Drop("words", "3 not in [5, 9]")
    # words as curll.text.words counts them for every content check: a hyphen parts two, a dash is none
    dashed = {"text": "Sam's well-known dog \u2014 ran."}
    assert flt.word_range("text", 3, 3)(dashed) == Drop("words", "5 not in [3, 3]")
    fields = {"question": "What is it?", "answer": "what is it"}
    assert degenerate(fields, n=3, limit=0.3, pair=("question", "answer")) == Drop(
        "degenerate", "the answer repeats the question"
    )
    p = ContentChecks(seed_word=True, grounded=0.5, on_topic=0.5, ngram=3, max_repeated=0.3,
                      min_prompt_words=3, english=0.8)  # fmt: skip
    ok = {"degenerate": None, "prompt_words": 5, "english": 1.0, "seed_word": True, "on_topic": 0.9,
          "grounding": 0.9, "word": "dog"}  # fmt: skip
    assert verdict("ir", ok, p) is None and verdict("cqa", ok, p) is None
    short = {**ok, "prompt_words": 1}
    assert verdict("ir", short, p) == Drop("short_prompt", "the instruction has 1 word (minimum 3)")
    assert verdict("cqa", {**ok, "prompt_words": 2}, p) == Drop(
        "short_prompt", "the question has 2 words (minimum 3)"
    )
    assert verdict("context", short, p) is None  # a passage's topic is no request
    assert verdict("ir", {**ok, "english": 0.5}, p) == Drop(
        "not_english", "50% of its words are English words (minimum 80%)"
    )
    assert verdict("ir", {**ok, "seed_word": False}, p) == Drop("seed_word", "'dog' is not in the text")
    assert verdict("cqa", {**ok, "seed_word": False}, p) is None  # a QA pair has no seed word to carry
    assert verdict("ir", {**ok, "seed_word": False}, p.model_copy(update={"seed_word": False})) is None
    assert verdict("ir", {**ok, "on_topic": 0.1}, p).code == "off_topic"  # type: ignore[union-attr]
    assert verdict("ir", {**ok, "on_topic": 0.1}, p.model_copy(update={"on_topic": 0})) is None  # off
    assert verdict("cqa", {**ok, "grounding": 0.2}, p).code == "ungrounded"  # type: ignore[union-attr]
    assert verdict("ir", {**ok, "grounding": 0.2}, p) is None  # not a CQA answer
    both = {**ok, "english": 0.5, "seed_word": False}  # the first check in order names the drop
    assert verdict("ir", both, p).code == "not_english"  # type: ignore[union-attr]
    assert verdict("ir", {**ok, "seed_word": False}, p, retry_only=True) is None  # generate's checks only
    assert {c.code for c in CHECKS} <= set(VERIFY_REASONS)


def test_set_checks_flag_rows_and_the_rejects_keep_code_and_detail_apart():
    ctx = inst.contexts([("c0", 0, "i0", "A text."), ("c1", 1, "i0", "Another text.")])
    pairs = inst.qa("cqa", ctx, {"c0": [("Q?", "A.")], "c1": [("Q?", "A."), ("Q2?", "A2.")]})
    assert flt.orphans(pairs, {inst.hx("c1")}, "context_id") == {
        inst.hx("cqac01"): Drop("context_dropped", inst.hx("c0"))
    }
    count = flt.qa_count(pairs, 2, "context_id")
    assert count == {inst.hx("cqac01"): Drop("qa_count", "1 pairs, expected 2")}
    flags = {**count, inst.hx("cqac12"): Drop("exact_duplicate", " dup of x: y ")}
    kept, rejects = flt.drop(pairs, "cqa", flags)
    assert kept["instance_id"].tolist() == [inst.hx("cqac11")]
    assert rejects[["reason", "detail"]].values.tolist() == [
        ["qa_count", "1 pairs, expected 2"],
        ["exact_duplicate", " dup of x: y "],  # verbatim: never split on its colon
    ]


def test_a_field_of_zero_width_characters_alone_is_empty():
    """White space and zero-width characters show nothing: such a field is `empty`, not a
    one-word prompt that later checks would call too short."""
    row = {"instruction": "\u200b\u2060 \ufeff", "response": "Cats purr."}
    assert flt.not_empty("instruction", "response")(row) == Drop("empty", "instruction")
    assert flt.not_empty("response")(row) is None


def test_a_field_of_marks_or_punctuation_alone_is_empty_and_the_prompt_of_a_passage_counts():
    """Direction marks, a soft hyphen or punctuation alone carry no word; a passage's
    expanded_topic (its record's prompt) is checked with its text."""
    row = {"instruction": "Say something about cats.", "response": "\u200e\u200f\u00ad"}
    assert flt.not_empty("instruction", "response")(row) == Drop("empty", "response")
    assert flt.not_empty("response")({"response": "..."}) == Drop("empty", "response")
    for answer in ("7", ">", "=", "%", "+", "$"):  # questions about symbols have such answers
        assert flt.not_empty("response")({"response": answer}) is None, answer
    assert inst_types.TYPES["context"].required == ("expanded_topic", "text")
    assert inst_types.TYPES["ir"].required == ("instruction", "response")
