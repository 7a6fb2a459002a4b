"""The vllm backend's plumbing, against a stand-in ``vllm`` package written by the test.

vLLM itself needs a GPU and is an optional extra; these tests check what our code does
around it: structured-output params, request order across data-parallel workers (real
spawned processes, each told its GPUs), and that nothing imports vllm unless asked.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from curll.llm.types import ChatRequest, Sampling

FAKE = """
import json, os
from dataclasses import dataclass, field

class StructuredOutputsParams:
    def __init__(self, json=None):
        self.json = json

@dataclass
class SamplingParams:
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 16
    seed: int | None = None
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    structured_outputs: object = None

@dataclass
class _Gen:
    text: str
    token_ids: list
    finish_reason: str = "stop"

@dataclass
class _Out:
    prompt_token_ids: list
    outputs: list

class LLM:
    def __init__(self, model, **kwargs):
        self.model, self.kwargs = model, kwargs

    def chat(self, chats, params, use_tqdm=False):
        out = []
        for chat, p in zip(chats, params):
            answer = {"user": chat[-1]["content"], "gpus": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
                      "schema": p.structured_outputs.json if p.structured_outputs else None,
                      "tp": self.kwargs["tensor_parallel_size"], "seed": p.seed}
            out.append(_Out([1, 2, 3], [_Gen(json.dumps(answer), [7, 8])]))
        return out
"""


@pytest.fixture
def fake_vllm(tmp_path, monkeypatch):
    pkg = tmp_path / "fakevllm" / "vllm"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "from vllm.sampling_params import *\nfrom vllm.sampling_params import LLM\n"
    )
    (pkg / "sampling_params.py").write_text(FAKE)
    monkeypatch.syspath_prepend(str(pkg.parent))
    monkeypatch.setenv("PYTHONPATH", str(pkg.parent))  # for the spawned data-parallel workers
    for name in [m for m in sys.modules if m == "vllm" or m.startswith("vllm.")]:
        monkeypatch.delitem(sys.modules, name)
    return pkg


def reqs(n: int) -> list[ChatRequest]:
    # not alphabetical: vLLM must get the task's order (answer after question)
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string"}, "a": {"type": "string"}},
        "required": ["a"],
    }
    return [
        ChatRequest.build([("user", f"q{i}")], schema=schema, sampling=Sampling(seed=5)) for i in range(n)
    ]


def test_single_engine_sends_schema_and_sampling(fake_vllm):
    from curll.llm.vllm_backend import VLLMBackend

    backend = VLLMBackend("org/model", tensor_parallel=2)
    out = backend.complete(reqs(3))
    answers = [json.loads(c.text) for c in out]
    assert [a["user"] for a in answers] == ["q0", "q1", "q2"]
    assert answers[0]["schema"]["required"] == ["a"] and answers[0]["tp"] == 2
    assert list(answers[0]["schema"]["properties"]) == ["q", "a"]
    assert out[0].prompt_tokens == 3 and out[0].completion_tokens == 2


def test_data_parallel_workers_keep_order_and_own_gpus(fake_vllm):
    from curll.llm.vllm_backend import VLLMBackend

    backend = VLLMBackend("org/model", tensor_parallel=2, data_parallel=2)
    try:
        answers = [json.loads(c.text) for c in backend.complete(reqs(5))]
    finally:
        backend.close()
    assert [a["user"] for a in answers] == [f"q{i}" for i in range(5)]
    assert {a["gpus"] for a in answers[0::2]} == {"0,1"} and {a["gpus"] for a in answers[1::2]} == {"2,3"}


def test_nothing_heavy_is_imported_until_a_backend_is_built():
    code = textwrap.dedent(
        """
        import sys
        import curll.llm.factory, pipeline.generate, pipeline.skill_graph
        print(sorted(m for m in ("vllm", "torch", "transformers", "xgrammar") if m in sys.modules))
        """
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_seed_per_request_from_its_key_a_bad_prompt_fails_alone_and_folders_are_fingerprinted(
    fake_vllm, tmp_path
):
    from curll.llm.identity import fingerprint, request_seed
    from curll.llm.vllm_backend import VLLMBackend

    # the stand-in refuses any batch holding a prompt that says "too long"
    text = (fake_vllm / "sampling_params.py").read_text()
    (fake_vllm / "sampling_params.py").write_text(text.replace(
        "        out = []\n",
        "        if any('too long' in c[-1]['content'] for c in chats):\n"
        "            raise ValueError('prompt is longer than the maximum model length')\n"
        "        out = []\n",
    ))  # fmt: skip
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    backend = VLLMBackend(str(folder), name="run/0")
    assert backend.model == f"run/0@{fingerprint(folder)}"
    batch = [*reqs(2), ChatRequest.build([("user", "too long")], sampling=Sampling(seed=5))]
    out = backend.complete(batch)
    assert out[2].error is not None and "longer than the maximum" in out[2].error
    answers = [json.loads(c.text) for c in out[:2]]
    assert [a["user"] for a in answers] == ["q0", "q1"]
    # both asked with Sampling(seed=5): different requests, different seeds, from their keys
    assert [a["seed"] for a in answers] == [request_seed(r, backend.model) for r in batch[:2]]
    assert answers[0]["seed"] != answers[1]["seed"]
    assert VLLMBackend("org/model").model == "org/model"  # a hub id: nothing to fingerprint


def test_a_vllm_profile_on_a_builtin_model_is_labelled_by_its_name(fake_vllm, tmp_path):
    """llm_models builds the folder without importing vllm; the factory's backend loads it and
    is called ``embedded@fingerprint`` in cache keys, not by the folder's path."""
    from curll.llm.factory import make_backend
    from curll.llm.identity import fingerprint
    from curll.llm.vllm_backend import VLLMBackend
    from pipeline import llm_models
    from tests.pipeline.test_llm_models import params

    p = params(tmp_path, "embedded", ["embedded"])
    on_vllm = p.llm.profiles["vllm"].model_copy(update={"model": "embedded"})
    llm = p.llm.model_copy(update={"use": "vllm", "profiles": {**p.llm.profiles, "vllm": on_vllm}})
    p = p.model_copy(update={"llm": llm})
    llm_models.run(p, "vllm")
    assert "vllm" not in sys.modules  # building the folder needs no vLLM
    folder = tmp_path / "models" / "vllm" / "model"
    backend = make_backend(p.llm, models=p.llm_models)
    assert isinstance(backend, VLLMBackend) and backend._local is not None
    assert backend.model == f"embedded@{fingerprint(folder)}"
    assert backend._local.llm.model == str(folder)
