"""The transformers backend on the embedded tiny model: constrained JSON, batching, determinism."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from curll.llm.identity import fingerprint
from curll.llm.local import build_local_model
from curll.llm.transformers_backend import TransformersBackend
from curll.llm.types import ChatRequest
from curll.sampling import Sampling

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {"type": "string", "pattern": "^[A-Za-z]{1,8}( [A-Za-z]{1,8}){1,3}$"},
                "minItems": 3,
                "maxItems": 4,
            }
        },
        "required": ["items"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "rating": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
            "why": {"type": "string", "maxLength": 40},
        },
        "required": ["rating", "why"],
        "additionalProperties": False,
    },
    {
        "anyOf": [
            {
                "type": "object",
                "properties": {"edge": {"const": True}, "from": {"const": "a"}},
                "required": ["edge", "from"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"edge": {"const": False}, "from": {"const": "NA"}},
                "required": ["edge", "from"],
                "additionalProperties": False,
            },
        ]
    },
]


@pytest.fixture(scope="module")
def backend(embedded_model: Path) -> TransformersBackend:
    return TransformersBackend(str(embedded_model), name="embedded", device="cpu")


def requests(n: int, *, seed: int = 42, temperature: float = 0.7) -> list[ChatRequest]:
    return [
        ChatRequest.build(
            [("system", "Answer in JSON."), ("user", f"question {i}")],
            schema=SCHEMAS[i % len(SCHEMAS)],
            sampling=Sampling(temperature=temperature, max_tokens=300, seed=seed),
        )
        for i in range(n)
    ]


def test_random_model_returns_schema_valid_json(backend):
    reqs = requests(9)
    out = backend.complete(reqs)
    assert len(out) == 9
    for req, c in zip(reqs, out, strict=True):
        assert c.error is None and c.finish_reason == "stop", c
        jsonschema.validate(json.loads(c.text, strict=False), req.schema or {})
        assert c.prompt_tokens > 0 and c.completion_tokens > 0


def test_json_follows_the_schema_key_order_not_the_alphabet(backend):
    schema = {
        "type": "object",
        "properties": {
            "question": {"type": "string", "maxLength": 20},
            "answer": {"type": "string", "maxLength": 20},
        },
        "required": ["question", "answer"],
        "additionalProperties": False,
    }
    reqs = [
        ChatRequest.build([("user", f"q{i}")], schema=schema, sampling=Sampling(seed=i)) for i in range(4)
    ]
    for c in backend.complete(reqs):
        assert c.error is None
        assert list(json.loads(c.text, strict=False)) == ["question", "answer"], c.text


def test_answers_do_not_depend_on_batch_order_or_size(backend):
    reqs = requests(6)
    together = [c.text for c in backend.complete(reqs)]
    reversed_ = [c.text for c in backend.complete(reqs[::-1])][::-1]
    alone = [backend.complete([r])[0].text for r in reqs[:2]]
    assert together == reversed_
    assert together[:2] == alone


def test_seed_changes_the_sample_and_temperature_zero_is_greedy(backend):
    base = [c.text for c in backend.complete(requests(3, seed=1))]
    other = [c.text for c in backend.complete(requests(3, seed=2))]
    assert base != other
    greedy = [c.text for c in backend.complete(requests(3, seed=1, temperature=0.0))]
    assert greedy == [c.text for c in backend.complete(requests(3, seed=9, temperature=0.0))]


def test_a_prompt_too_long_fails_alone(backend):
    long = ChatRequest.build([("user", "word " * 5000)], sampling=Sampling(max_tokens=10))
    short = ChatRequest.build([("user", "hi")], sampling=Sampling(max_tokens=10))
    bad, good = backend.complete([long, short])
    assert bad.error is not None and "exceeds" in bad.error
    assert good.error is None and good.text


def test_model_name_carries_a_content_fingerprint(tmp_path, embedded_spec, embedded_model, backend):
    assert backend.model == f"embedded@{fingerprint(embedded_model)}"
    build_local_model("embedded", embedded_spec, tmp_path / "again")
    build_local_model("embedded", embedded_spec.model_copy(update={"seed": 1}), tmp_path / "reseeded")
    assert fingerprint(tmp_path / "again") == fingerprint(embedded_model)  # same inputs, same model
    assert fingerprint(tmp_path / "reseeded") != fingerprint(embedded_model)


def test_settings_that_change_answers_change_the_model_name_and_so_the_cache_key(embedded_model, backend):
    """Answers cut at a loop, or made in another dtype, are other answers: never served from the
    cache of the default settings (whose name, and cached answers, stay as they were)."""

    def named(**kw: Any) -> str:
        return TransformersBackend(str(embedded_model), name="embedded", device="cpu", **kw).model

    assert named(stop_loops=False) == f"{backend.model}+no-stop-loops"
    assert named(dtype="float32") == f"{backend.model}+dtype-float32"
    assert named(dtype="auto", stop_loops=True) == backend.model


def test_threads_setting_is_applied(embedded_model):
    import torch

    before = torch.get_num_threads()
    try:
        TransformersBackend(str(embedded_model), device="cpu", threads=1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_each_answer_is_reported_as_its_row_finishes(backend):
    """Rows of different lengths finish out of order; each is reported once, as it finishes,
    with the completion the batch then returns (so the engine stores and counts it at once)."""
    reqs = [
        ChatRequest.build([("user", f"say {i}")],
                          sampling=Sampling(temperature=0.0, max_tokens=2 + 6 * (i % 3), seed=i))
        for i in range(6)
    ]  # fmt: skip
    seen: list[tuple[int, object]] = []
    out = backend.complete(reqs, on_answer=lambda i, c: seen.append((i, c)))
    assert sorted(i for i, _ in seen) == list(range(6))
    assert [c for _, c in sorted(seen, key=lambda t: t[0])] == out
    assert [i for i, _ in seen] != list(range(6))  # the short rows came first


def test_the_hub_clients_download_records_are_not_part_of_a_models_fingerprint(tmp_path, embedded_model):
    """``hf download --local-dir`` writes ``.cache/huggingface/download/*.metadata`` with the time
    of the download: the same weights downloaded twice got two names, so other seeds and answers."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(embedded_model, copy)
    record = copy / ".cache" / "huggingface" / "download" / "config.json.metadata"
    record.parent.mkdir(parents=True)
    record.write_text("abc123\netag-1\n1732700000.0\n")
    assert fingerprint(copy) == fingerprint(embedded_model)
    record.write_text("abc123\netag-1\n1732800000.0\n")
    assert fingerprint(copy) == fingerprint(embedded_model)
    (copy / "config.json").write_text((copy / "config.json").read_text() + " ")
    assert fingerprint(copy) != fingerprint(embedded_model)  # a file that is content still counts
