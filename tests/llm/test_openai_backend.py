"""The openai backend against a real local HTTP server that misbehaves on purpose."""

from __future__ import annotations

import pytest

from curll.errors import CurllError
from curll.llm import ChatRequest, Engine
from curll.llm.openai_backend import OpenAIBackend
from tests.llm.server import FakeChatServer

SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"echo": {"type": "string"}},
    "required": ["echo"],
}


def req(text: str, schema: dict[str, object] | None = SCHEMA) -> ChatRequest:
    return ChatRequest.build([("system", "Answer in JSON."), ("user", text)], schema=schema)


@pytest.fixture
def server():
    with FakeChatServer() as srv:
        yield srv


def backend(server: FakeChatServer, **kw) -> OpenAIBackend:
    kw.setdefault("timeout_s", 0.5)
    return OpenAIBackend("tiny", base_url=server.base_url, **kw)


def test_retries_through_429_500_and_timeout(server):
    server.script.extend(["429", "500", "timeout", "500"])
    [done] = backend(server, max_retries=5).complete([req("hello")])
    assert done.error is None
    assert done.text == '{"echo": "hello"}'
    assert (done.prompt_tokens, done.completion_tokens, done.finish_reason) == (7, 5, "stop")
    assert len(server.requests) == 5


def test_gives_up_after_max_retries_without_raising(server):
    server.script.extend(["500"] * 10)
    [done] = backend(server, max_retries=2).complete([req("hello")])
    assert done.error is not None and "500" in done.error
    assert len(server.requests) == 3


def test_malformed_body_and_non_json_content_are_retried_by_the_engine(server):
    server.script.extend(["malformed", "not-json"])
    engine = Engine(backend(server, max_retries=0), attempts=3, progress=False)
    [result] = engine.run([req("hi")])
    assert result.status == "ok" and result.parsed == {"echo": "hi"}
    assert result.attempts == 3


def test_reject_keeps_reason_and_raw_text(server):
    server.script.extend(["not-json"] * 2)
    [result] = Engine(backend(server), attempts=2, progress=False).run([req("hi")])
    assert result.status == "reject"
    assert result.reason is not None and result.reason.startswith("invalid JSON")
    assert result.text == "this is not JSON"


def test_sends_schema_sampling_and_key_from_env(server, monkeypatch):
    monkeypatch.setenv("CURLL_TEST_KEY", "sk-secret-123")
    b = backend(server, api_key_env="CURLL_TEST_KEY")
    b.complete([req("a"), req("b", schema=None)])
    with_schema, without = sorted(server.requests, key=lambda r: r["messages"][-1]["content"])
    assert with_schema["response_format"]["json_schema"]["schema"] == SCHEMA
    assert "response_format" not in without
    assert with_schema["temperature"] == 0.3 and with_schema["max_tokens"] == 1024
    assert all(h.get("authorization") == "Bearer sk-secret-123" for h in server.headers)
    assert "sk-secret" not in repr(b)


def test_missing_key_variable_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("CURLL_NO_SUCH_KEY", raising=False)
    with pytest.raises(CurllError, match="CURLL_NO_SUCH_KEY is not set"):
        OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", api_key_env="CURLL_NO_SUCH_KEY")


def test_concurrency_is_bounded():
    with FakeChatServer(latency_s=0.05) as srv:
        answers = backend(srv, concurrency=3).complete([req(f"q{i}") for i in range(12)])
    assert [a.error for a in answers] == [None] * 12
    assert [a.text for a in answers] == [f'{{"echo": "q{i}"}}' for i in range(12)]
    assert srv.max_in_flight == 3
