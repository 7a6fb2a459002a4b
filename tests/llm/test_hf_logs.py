"""transformers' "Loading weights" bars stay out of a stage's log: :func:`curll.llm.hf_logs.no_load_bars`
around curll's model loads, and transformers' own setting as it was after it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from transformers import AutoModelForCausalLM
from transformers.utils import logging as hf_logging

from curll.llm.hf_logs import no_load_bars
from curll.llm.transformers_backend import load_causal_lm


@pytest.mark.skipif(
    "HF_HUB_DISABLE_PROGRESS_BARS" in os.environ, reason="HF_HUB_DISABLE_PROGRESS_BARS decides the bars here"
)
def test_a_model_load_prints_no_bar_where_transformers_alone_does(embedded_model: Path, capfd):
    AutoModelForCausalLM.from_pretrained(embedded_model)
    assert "Loading weights" in capfd.readouterr().err  # what the stage logs showed, one line a load
    load_causal_lm(str(embedded_model), device="cpu", dtype="float32")
    assert "Loading weights" not in capfd.readouterr().err
    assert hf_logging.is_progress_bar_enabled()


def test_the_setting_is_restored_after_an_error_and_left_off_where_it_was_off(tmp_path: Path):
    with pytest.raises(OSError):
        load_causal_lm(str(tmp_path / "no-model"), device="cpu", dtype="float32")
    assert hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        with no_load_bars():
            pass
        assert not hf_logging.is_progress_bar_enabled()
    finally:
        hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def test_a_users_choice_in_the_environment_is_left_alone(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "0")  # bars asked for: not turned off, no warning
    before = hf_logging.is_progress_bar_enabled()
    with no_load_bars():
        assert hf_logging.is_progress_bar_enabled() == before
