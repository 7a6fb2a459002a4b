"""The usage line a run prints: its name once, then what it cost."""

from __future__ import annotations

from curll.llm.usage import Usage


def test_a_run_named_by_the_engine_alone_says_its_name_once():
    line = Usage("answer seed-42/joint/0", "answer seed-42/joint/0", "m", "b", requests=30, cached=30).line()
    assert line.startswith("answer seed-42/joint/0: 30 requests (30 cached)")
    assert line.count("seed-42/joint/0") == 1


def test_a_task_run_names_the_stage_and_the_task():
    line = Usage("csqa", "generate", "m", "b", requests=21, sent=29, ok=20).line()
    assert line.startswith("generate: csqa: 21 requests (0 cached), 29 sent, 20 ok;")
