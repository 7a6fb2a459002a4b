"""The engine commits each answer to the cache as it comes, not once per backend batch: a
killed run loses only the requests in flight. A backend without ``on_answer`` still works
(its batch is committed when it returns)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any, ClassVar

import pytest

import curll.llm.engine as engine_module
from curll.llm.cache import RequestCache
from curll.llm.engine import Engine
from curll.llm.openai_backend import OpenAIBackend
from curll.llm.protocol import OnAnswer, takes_on_answer
from curll.llm.types import ChatRequest, Completion, Result
from harness.server import FakeChatServer
from tests.fakes import ScriptedBackend

SCHEMA = {"type": "object", "properties": {"echo": {"type": "string"}}, "required": ["echo"]}


def req(text: str) -> ChatRequest:
    return ChatRequest.build([("user", text)], schema=SCHEMA)


class GatedServer(FakeChatServer):
    """Answers a "slow" question only once ``slow_gate`` is set; the others at once."""

    def __init__(self) -> None:
        super().__init__()
        self.slow_gate = threading.Event()

    def answer(self, body: dict[str, Any]) -> str:
        if body["messages"][-1]["content"].startswith("slow"):
            self.slow_gate.wait(60)
        return super().answer(body)


def stored(path: Path, keys: list[str]) -> dict[str, str]:
    """Key to text of the answers a second, separate connection to the cache file sees."""
    with closing(sqlite3.connect(path, timeout=30)) as db:
        marks = ",".join("?" * len(keys))
        rows = db.execute(f"SELECT key, text FROM completions WHERE key IN ({marks})", keys)
        return dict(rows.fetchall())


def test_answers_are_in_the_cache_before_their_batch_ends(tmp_path):
    db = tmp_path / "cache.db"
    RequestCache(db).close()  # the file exists before the engine and this test both open it
    fast, slow = [req(f"fast {i}") for i in range(3)], [req(f"slow {i}") for i in range(3)]
    with GatedServer() as server:
        backend = OpenAIBackend("tiny", base_url=server.base_url, concurrency=8, timeout_s=60)
        keys = [r.key(backend.model) for r in fast + slow]
        out: dict[str, Any] = {}

        def run() -> None:  # the cache's connection belongs to the thread that runs the engine
            with Engine(backend, RequestCache(db), batch_size=64, progress=False) as engine:
                out["results"] = engine.run(fast + slow)
                out["counts"] = (engine.backend_calls, engine.new_requests)

        worker = threading.Thread(target=run)
        worker.start()
        try:
            deadline = time.monotonic() + 60
            while len(stored(db, keys)) < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            early = stored(db, keys)
            assert worker.is_alive(), "the batch must still be waiting for its slow answers"
            assert sorted(early) == sorted(keys[:3]), "the three fast answers, committed mid-batch"
            assert {json.loads(text)["echo"] for text in early.values()} == {"fast 0", "fast 1", "fast 2"}
        finally:
            server.slow_gate.set()
            worker.join(60)
    results: list[Result] = out["results"]
    assert [r.status for r in results] == ["ok"] * 6
    assert out["counts"] == (6, 6) and len(server.requests) == 6
    assert len(stored(db, keys)) == 6


class Bar:
    """Records the engine's progress bar updates."""

    made: ClassVar[list[Bar]] = []

    def __init__(self, **kwargs: Any) -> None:
        self.updates: list[int] = []
        Bar.made.append(self)

    def update(self, n: int = 1) -> None:
        if n:
            self.updates.append(n)

    def set_postfix_str(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass

    @staticmethod
    def write(text: str) -> None:
        pass


class Reporting:
    """Reports every answer (twice, to test that it is stored once), checking the cache file
    holds it before the next one is computed."""

    name = "reporting"
    model = "reporting-model"

    def __init__(self, db: Path) -> None:
        self.db = db
        self.calls = 0

    def complete(
        self, requests: Sequence[ChatRequest], on_answer: OnAnswer | None = None
    ) -> list[Completion]:
        assert on_answer is not None
        self.calls += 1
        out = []
        for i, r in enumerate(requests):
            text = r.messages[-1].content
            done = (
                Completion(json.dumps({"echo": text}), 1, 1)
                if text != "broken"
                else Completion("", error="no")
            )
            on_answer(i, done)
            on_answer(i, done)
            key = r.key(self.model)
            assert (key in stored(self.db, [key])) == (done.error is None)  # committed at once
            out.append(done)
        on_answer(len(requests), out[0])  # out of range: ignored
        return out


@pytest.fixture
def bars(monkeypatch: pytest.MonkeyPatch) -> list[Bar]:
    Bar.made = []
    monkeypatch.setattr(engine_module, "tqdm", Bar)
    return Bar.made


def test_the_bar_moves_per_answer_and_each_answer_is_stored_once(tmp_path, bars):
    db = tmp_path / "cache.db"
    backend = Reporting(db)
    asked = [req("a"), req("b"), req("a"), req("c"), req("broken")]  # "a" twice: asked once
    engine = Engine(backend, RequestCache(db), attempts=1, batch_size=2, progress=False)
    results = engine.run(asked)
    assert [r.status for r in results] == ["ok", "ok", "ok", "ok", "reject"]
    assert (engine.backend_calls, engine.new_requests, backend.calls) == (4, 4, 2)
    assert bars[0].updates == [2, 1, 1, 1]  # per answer ("a" counts twice), none per batch
    engine.close()
    assert len(stored(db, [r.key(backend.model) for r in asked])) == 3


def test_a_backend_without_on_answer_is_committed_per_batch(tmp_path, bars):
    db = tmp_path / "cache.db"
    backend = ScriptedBackend(lambda r: {"echo": r.messages[-1].content})
    assert not takes_on_answer(backend) and takes_on_answer(Reporting(db))
    engine = Engine(backend, RequestCache(db), attempts=1, batch_size=2, progress=False)
    results = engine.run([req(f"q{i}") for i in range(5)])
    assert [r.status for r in results] == ["ok"] * 5 and engine.backend_calls == 5
    assert bars[0].updates == [2, 2, 1]
    engine.close()
    assert len(stored(db, [req(f"q{i}").key(backend.model) for i in range(5)])) == 5
