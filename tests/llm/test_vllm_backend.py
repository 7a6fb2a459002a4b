"""The vllm backend's plumbing, against a stand-in ``vllm`` package written by the test.

vLLM itself needs a GPU and is an optional extra; these tests check what our code does
around it: structured-output params, request order across data-parallel workers (real
spawned processes, each told its GPUs, whose engine starts a process of its own as vLLM's
does), workers that fail or die, stopping the workers and freeing an in-process engine, and
that nothing imports vllm unless asked.
"""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from curll.errors import CurllError
from curll.llm.types import ChatRequest
from curll.sampling import Sampling

FAKE = """
import json, multiprocessing, os, time, weakref
from dataclasses import dataclass

#: what happened to this process's engines: ("init" | "shutdown" | "freed", model), ("cleanup", "")
EVENTS = []


def _child():
    pass


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


class _Core:  # LLM.llm_engine.engine_core
    def __init__(self, model):
        self.model = model

    def shutdown(self):
        if self.model == "org/slow-stop":
            time.sleep(3600)  # an engine that never finishes shutting down
        EVENTS.append(("shutdown", self.model))


class _LLMEngine:
    def __init__(self, model):
        self.engine_core = _Core(model)


class LLM:
    def __init__(self, model, **kwargs):
        if model == "org/broken":
            raise RuntimeError("no such model")
        if model == "org/dies" and os.environ.get("CUDA_VISIBLE_DEVICES") == "1":
            os._exit(3)  # the last data-parallel worker dies
        # vLLM starts processes of its own (its engine core, its GPU workers)
        child = multiprocessing.Process(target=_child)
        child.start()
        child.join()
        self.model, self.kwargs = model, kwargs
        self.llm_engine = _LLMEngine(model)
        EVENTS.append(("init", model))
        weakref.finalize(self, EVENTS.append, ("freed", model))

    def chat(self, chats, params, use_tqdm=False, chat_template=None):
        out = []
        for chat, p in zip(chats, params):
            answer = {"user": chat[-1]["content"], "gpus": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
                      "schema": p.structured_outputs.json if p.structured_outputs else None,
                      "tp": self.kwargs["tensor_parallel_size"], "seed": p.seed}
            out.append(_Out([1, 2, 3], [_Gen(json.dumps(answer), [7, 8])]))
        return out
"""

DISTRIBUTED = """
import gc

from vllm.sampling_params import EVENTS


def cleanup_dist_env_and_memory(shutdown_ray=False):
    gc.collect()
    EVENTS.append(("cleanup", ""))
"""


def install_fake_vllm(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Write the stand-in ``vllm`` package under ``root`` and make it the one imported, here
    and in spawned processes; its folder."""
    pkg = root / "fakevllm" / "vllm"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "from vllm.sampling_params import *\nfrom vllm.sampling_params import LLM\n"
    )
    (pkg / "sampling_params.py").write_text(FAKE)
    (pkg / "distributed.py").write_text(DISTRIBUTED)
    monkeypatch.syspath_prepend(str(pkg.parent))
    monkeypatch.setenv("PYTHONPATH", str(pkg.parent))  # for the spawned data-parallel workers
    for name in [m for m in sys.modules if m == "vllm" or m.startswith("vllm.")]:
        monkeypatch.delitem(sys.modules, name)
    return pkg


@pytest.fixture
def fake_vllm(tmp_path, monkeypatch):
    return install_fake_vllm(tmp_path, monkeypatch)


def events() -> list[tuple[str, str]]:
    import vllm

    return list(vllm.EVENTS)


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


def finishes(seconds: float, fn: Any) -> Any:
    """``fn()``'s result or exception, or a failed test if it is still running after ``seconds``."""
    done: dict[str, Any] = {}

    def run() -> None:
        try:
            done["value"] = fn()
        except BaseException as exc:
            done["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still running after {seconds} s")
    if "error" in done:
        raise done["error"]
    return done["value"]


def test_single_engine_sends_schema_and_sampling(fake_vllm):
    from curll.llm.vllm_backend import VLLMBackend

    backend = VLLMBackend("org/model", tensor_parallel=2)
    out = backend.complete(reqs(3))
    backend.close()
    answers = [json.loads(c.text) for c in out]
    assert [a["user"] for a in answers] == ["q0", "q1", "q2"]
    assert answers[0]["schema"]["required"] == ["a"] and answers[0]["tp"] == 2
    assert list(answers[0]["schema"]["properties"]) == ["q", "a"]
    assert out[0].prompt_tokens == 3 and out[0].completion_tokens == 2


def test_the_model_name_says_vllm_and_a_dtype_so_no_other_engines_answer_is_served(fake_vllm):
    from curll.llm.vllm_backend import VLLMBackend

    names = [VLLMBackend("org/model"), VLLMBackend("org/model", dtype="bfloat16")]
    for b in names:
        b.close()
    assert [b.model for b in names] == ["org/model+vllm", "org/model+vllm+dtype-bfloat16"]


def test_close_shuts_the_engine_down_and_frees_it(fake_vllm):
    from curll.llm.vllm_backend import VLLMBackend

    backend = VLLMBackend("org/model")
    assert events() == [("init", "org/model")]
    backend.close()
    assert set(events()) == {("init", "org/model"), ("shutdown", "org/model"), ("freed", "org/model"),
                             ("cleanup", "")}  # fmt: skip
    assert events().index(("shutdown", "org/model")) < events().index(("cleanup", ""))
    backend.close()  # a second close does nothing
    assert len(events()) == 4
    with pytest.raises(RuntimeError, match="closed"):
        backend.complete(reqs(1))


def test_close_frees_the_engine_where_vllm_has_no_cleanup(fake_vllm, monkeypatch):
    from curll.llm import vllm_backend

    monkeypatch.setitem(sys.modules, "vllm.distributed", None)  # import fails: an older layout
    backend = vllm_backend.VLLMBackend("org/model")
    backend.close()
    assert events() == [("init", "org/model"), ("shutdown", "org/model"), ("freed", "org/model")]
    vllm_backend._shut_down(object())  # an engine with nothing to shut down


def test_data_parallel_workers_keep_order_and_own_gpus(fake_vllm):
    from curll.llm.vllm_backend import VLLMBackend

    # each worker's engine starts a process of its own: a daemonic worker could not
    backend = finishes(120, lambda: VLLMBackend("org/model", tensor_parallel=2, data_parallel=2))
    procs = list(backend._procs)
    try:
        answers = [json.loads(c.text) for c in backend.complete(reqs(5))]
    finally:
        backend.close()
    assert [a["user"] for a in answers] == [f"q{i}" for i in range(5)]
    assert {a["gpus"] for a in answers[0::2]} == {"0,1"} and {a["gpus"] for a in answers[1::2]} == {"2,3"}
    assert not any(p.is_alive() for p in procs) and [p.exitcode for p in procs] == [0, 0]
    with pytest.raises(RuntimeError, match="closed"):
        backend.complete(reqs(1))


def test_a_worker_that_fails_to_load_stops_the_backend_with_its_error(fake_vllm):
    from curll.llm.vllm_backend import VLLMBackend

    before = set(multiprocessing.active_children())
    with pytest.raises(CurllError, match=r"worker 0 \(GPUs 0\) failed to load org/broken: .*no such model"):
        finishes(120, lambda: VLLMBackend("org/broken", data_parallel=2))
    assert not set(multiprocessing.active_children()) - before  # the other worker is stopped too


def test_a_worker_that_dies_is_an_error_not_a_hang(fake_vllm):
    from curll.llm.vllm_backend import VLLMBackend

    before = set(multiprocessing.active_children())
    with pytest.raises(CurllError, match=r"worker 1 \(GPUs 1\) exited \(exit code 3\)"):
        finishes(120, lambda: VLLMBackend("org/dies", data_parallel=2))
    assert not set(multiprocessing.active_children()) - before


def test_close_terminates_a_worker_that_does_not_stop(fake_vllm, monkeypatch):
    from curll.llm import vllm_backend

    monkeypatch.setattr(vllm_backend, "STOP_TIMEOUT_S", 1.0)
    backend = finishes(120, lambda: vllm_backend.VLLMBackend("org/slow-stop", data_parallel=2))
    procs = list(backend._procs)
    start = time.monotonic()
    finishes(60, backend.close)
    assert time.monotonic() - start < 30
    assert not any(p.is_alive() for p in procs)


def test_workers_of_a_backend_never_closed_stop_when_python_exits(fake_vllm):
    code = textwrap.dedent(
        """
        from curll.llm.types import ChatRequest
        from curll.llm.vllm_backend import VLLMBackend

        backend = VLLMBackend("org/model", data_parallel=2)
        print(len(backend.complete([ChatRequest.build([("user", "q")])])))
        """
    )  # no close(): Python must still exit, not wait for the workers forever
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"


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
