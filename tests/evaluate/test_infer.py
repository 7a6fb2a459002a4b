"""Trained models answer the test items: ``evaluate.repeats`` answers each, repeat 0 as a single
answer was asked (so a rerun with more repeats takes it from the request cache); one model in
memory at a time (its backend closed before the next model loads)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from curll.artifacts import records as records_of
from curll.config import load_params
from curll.evaluate import infer
from curll.evaluate.items import build_items, fit_prompt
from curll.llm.bpe import train_bpe
from curll.llm.types import ChatRequest
from curll.schemas.evaluate import AnswerSchema
from curll.train.orders import SavedModel
from tests import instances as inst
from tests.evaluate.test_items import PASSAGE, records
from tests.fakes import ScriptedBackend
from tests.llm.test_vllm_backend import events, install_fake_vllm

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("model")
    tok = train_bpe([PASSAGE * 3, "Where did the cat sit? Question: answer Name a colour."], 300)
    tok.save_pretrained(folder)
    items = build_items(records(), inst.indicators(["i0", "i1"]), ("ir", "cqa", "csqa"), max_per_type=0,
                        seed=1)  # fmt: skip
    p = load_params(ROOT / "params.yaml").evaluate.infer.model_copy(update={"prompt_tokens": 10_000})
    model = SavedModel("seed-42/continual/0", "continual", (0,), 42, folder)
    return model, items, p


def answering(monkeypatch: pytest.MonkeyPatch) -> ScriptedBackend:
    """The model answers with its request's sampling seed (so two repeats differ)."""
    backend = ScriptedBackend(lambda req: f"seed {req.sampling.seed}")
    monkeypatch.setattr(infer, "trained_model_backend", lambda folder, name, p, chat_template=None: backend)
    return backend


def test_repeat_0_is_the_single_answer_and_more_repeats_take_it_from_the_cache(setup, tmp_path, monkeypatch):
    model, items, p = setup
    cache = tmp_path / "cache.sqlite"
    backend = answering(monkeypatch)
    one = AnswerSchema.validate(infer.answer(model, items, p, cache))
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model.folder))
    before = [ChatRequest.build(fit_prompt(item, tok, p.prompt_tokens)[0],  # type: ignore[index,arg-type]
                                sampling=p.sampling.to_sampling(), prompt_version=infer.PROMPT_VERSION)
              for item in records_of(items)]  # fmt: skip  # the requests of one answer an item
    assert backend.asked == before and one["repeat"].eq(0).all() and len(one) == len(items)
    assert one["answer"].eq(f"seed {p.sampling.seed}").all()

    again = answering(monkeypatch)
    two = AnswerSchema.validate(infer.answer(model, items, p, cache, repeats=2))
    assert len(two) == 2 * len(items) and two.groupby(["item_id", "run"]).size().eq(2).all()
    assert [r.sampling.seed for r in again.asked] == [p.sampling.seed + 1] * len(items)  # repeat 0: cached
    first = two[two["repeat"] == 0].reset_index(drop=True)
    pd.testing.assert_frame_equal(first, one)  # the same rows, request keys included
    second = two[two["repeat"] == 1]
    assert second["answer"].eq(f"seed {p.sampling.seed + 1}").all()
    assert {json.loads(s)["seed"] for s in second["sampling"]} == {p.sampling.seed + 1}
    assert not set(second["request_key"]) & set(first["request_key"])


def test_each_vllm_engine_is_shut_down_and_freed_before_the_next_model_loads(setup, tmp_path, monkeypatch):
    model, items, p = setup
    install_fake_vllm(tmp_path, monkeypatch)  # a stand-in vllm that records what its engines go through
    p = p.model_copy(update={"backend": "vllm"})
    shutil.copytree(model.folder, tmp_path / "other")
    models = [model, SavedModel("seed-42/continual/0-1", "continual", (0, 1), 42, tmp_path / "other")]
    for m in models:
        out = infer.answer(m, items, p, tmp_path / "cache.sqlite")
        assert len(out) == len(items) and out["status"].eq("ok").all()
    first, second = (str(m.folder) for m in models)
    lives = [[("init", m), ("shutdown", m), ("freed", m), ("cleanup", "")] for m in (first, second)]
    assert events() == lives[0] + lives[1]  # the first engine ends before the second begins


def test_two_runs_of_the_same_weights_give_the_same_answers(setup, embedded_model, tmp_path):
    """Every order's stage-0 model of a seed has the same weights: sampled with the same seed,
    they answer alike, whatever the run is named (the second from the cache)."""
    _, items, p = setup
    few = items.head(3)
    for name in ("a", "b"):
        shutil.copytree(embedded_model, tmp_path / name)
    p = p.model_copy(update={"sampling": p.sampling.model_copy(update={"max_tokens": 8})})
    cache = tmp_path / "cache.sqlite"
    joint = infer.answer(SavedModel("seed-42/joint/0", "joint", (0,), 42, tmp_path / "a"), few, p, cache)
    cont = infer.answer(
        SavedModel("seed-42/continual/0", "continual", (0,), 42, tmp_path / "b"), few, p, cache
    )
    assert joint["answer"].tolist() == cont["answer"].tolist() and set(joint["run"]) != set(cont["run"])
    assert joint["request_key"].tolist() == cont["request_key"].tolist()
