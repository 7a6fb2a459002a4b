"""Every check keeps a row (None) or drops it with a Drop, and the rejects take its code and
detail as they are: nothing is joined into one string and split again."""

from __future__ import annotations

import pytest

from curll.verify import filters as flt
from curll.verify.content import degenerate, not_english, off_topic, seed_word, short_prompt, ungrounded
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
    fields = {"question": "What is it?", "answer": "what is it"}
    assert degenerate(fields, n=3, limit=0.3, pair=("question", "answer")) == Drop(
        "degenerate", "the answer repeats the question"
    )
    assert short_prompt("ir", 1, 3) == Drop("short_prompt", "the instruction has 1 word (minimum 3)")
    assert short_prompt("cqa", 2, 3) == Drop("short_prompt", "the question has 2 words (minimum 3)")
    assert short_prompt("context", float("nan"), 3) is None  # a passage has no prompt
    assert not_english(0.5, 0.8) == Drop("not_english", "50% of its words are English words (minimum 80%)")
    assert seed_word(False, "dog") == Drop("seed_word", "'dog' is not in the text")
    assert seed_word(None, "dog") is None and off_topic(0.1, 0) is None  # not looked for; off
    assert ungrounded(float("nan"), 0.5) is None  # not a CQA answer
    assert off_topic(0.1, 0.5) is not None and ungrounded(0.2, 0.5) is not None


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
