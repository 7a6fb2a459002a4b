"""The openai backend against a real local HTTP server that misbehaves on purpose."""

from __future__ import annotations

import json

import pytest

from curll.config import load_params
from curll.llm.engine import Engine
from curll.llm.factory import make_backend
from curll.llm.openai_backend import OpenAIBackend
from curll.llm.types import ChatRequest
from harness.server import FakeChatServer

SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"echo": {"type": "string"}},
    "required": ["echo"],
}
ORDERED: dict[str, object] = {  # not alphabetical: the task's order must reach the server
    "type": "object",
    "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
    "required": ["question", "answer"],
}


def req(text: str, schema: dict[str, object] | None = SCHEMA) -> ChatRequest:
    return ChatRequest.build([("system", "Answer in JSON."), ("user", text)], schema=schema)


@pytest.fixture
def server():
    with FakeChatServer() as srv:
        yield srv


def backend(server: FakeChatServer, **kw) -> OpenAIBackend:
    # past a loaded machine's slowest good answer, below the fake server's 2 s "timeout"
    kw.setdefault("timeout_s", 1.5)
    kw.setdefault("backoff_s", 0.01)  # the retries' waits are not under test here
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


def test_a_malformed_body_is_retried_by_the_backend_and_non_json_content_by_the_engine(server):
    server.script.extend(["malformed", "not-json"])
    engine = Engine(backend(server, max_retries=1), attempts=3, progress=False)
    [result] = engine.run([req("hi")])
    assert result.status == "ok" and result.parsed == {"echo": "hi"}
    assert result.attempts == 2  # the body the server broke cost no attempt; the model's answer did


def test_a_malformed_body_past_the_retries_is_left_unsettled_not_asked_as_another_attempt(server):
    server.script.extend(["malformed", "ok"])
    engine = Engine(backend(server, max_retries=0), attempts=3, progress=False)
    [result] = engine.run([req("hi")])
    assert (result.status, result.transient, result.attempts) == ("reject", True, 1)
    assert len(server.requests) == 1 and len(engine.unsettled) == 1


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


def test_runs_without_a_key_when_the_variable_is_unset(server, monkeypatch):
    monkeypatch.delenv("CURLL_NO_SUCH_KEY", raising=False)
    [done] = backend(server, api_key_env="CURLL_NO_SUCH_KEY").complete([req("a")])
    assert done.error is None and server.headers[0]["authorization"] == "Bearer EMPTY"


@pytest.mark.parametrize("action", ["400", "500-invalid", "403"])  # 403: maybe one prompt's (moderation)
def test_an_invalid_request_is_final_not_retried(server, action):
    server.script.extend([action] * 5)
    [done] = backend(server, max_retries=5).complete([req("hello")])
    assert done.error is not None
    assert len(server.requests) == 1  # asked once: retrying cannot help


@pytest.mark.parametrize(
    ("mode", "path"),
    [
        ("json_schema", ("response_format", "json_schema", "schema")),
        ("llamacpp", ("response_format", "schema")),
        ("vllm", ("structured_outputs", "json")),
    ],
)
def test_each_json_mode_sends_the_schema_in_its_task_order(server, mode, path):
    backend(server, json_mode=mode).complete([req("a", schema=ORDERED)])
    sent = server.requests[0]
    for key in path:
        sent = sent[key]
    assert list(sent["properties"]) == ["question", "answer"]
    if mode == "llamacpp":
        assert server.requests[0]["response_format"]["type"] == "json_object"


def test_json_object_and_none_modes(server):
    backend(server, json_mode="json_object").complete([req("a")])
    backend(server, json_mode="none").complete([req("b")])
    assert server.requests[0]["response_format"] == {"type": "json_object"}
    assert "response_format" not in server.requests[1]


def test_penalties_are_sent_only_when_set(server):
    from dataclasses import replace

    plain = req("a")
    penalised = replace(plain, sampling=replace(plain.sampling, presence_penalty=0.5))
    backend(server).complete([plain])
    backend(server).complete([penalised])
    assert "presence_penalty" not in server.requests[0] and "frequency_penalty" not in server.requests[0]
    assert server.requests[1]["presence_penalty"] == 0.5


def test_concurrency_is_bounded():
    with FakeChatServer(latency_s=0.05) as srv:
        answers = backend(srv, concurrency=3).complete([req(f"q{i}") for i in range(12)])
    assert [a.error for a in answers] == [None] * 12
    assert [a.text for a in answers] == [f'{{"echo": "q{i}"}}' for i in range(12)]
    assert srv.max_in_flight == 3


def test_replicas_share_the_requests_with_concurrency_slots_each():
    with FakeChatServer(latency_s=0.05) as a, FakeChatServer(latency_s=0.05) as b:
        both = OpenAIBackend("tiny", base_url=[a.base_url, b.base_url], concurrency=2, timeout_s=5)
        answers = both.complete([req(f"q{i}") for i in range(16)])
    assert [x.text for x in answers] == [f'{{"echo": "q{i}"}}' for i in range(16)]
    assert len(a.requests) + len(b.requests) == 16 and min(len(a.requests), len(b.requests)) >= 4
    assert a.max_in_flight == b.max_in_flight == 2
    assert both.model == f"tiny@{a.base_url}"  # named after the first: replicas serve one model


def test_extra_body_fields_reach_the_server(server):
    backend(server, extra_body={"cache_prompt": False, "top_k": 0}).complete([req("a")])
    assert server.requests[0]["cache_prompt"] is False and server.requests[0]["top_k"] == 0


def test_stop_loops_streams_and_hangs_up_on_a_loop(server):
    server.script.extend(["loop", "ok"])
    engine = Engine(backend(server, stop_loops=True, timeout_s=5), attempts=2, progress=False)
    [result] = engine.run([req("hello")])
    assert result.status == "ok" and result.parsed == {"echo": "hello"}  # the loop was asked again
    assert result.attempts == 2 and all(r["stream"] for r in server.requests)
    looped, answered = server.streams(2)
    assert looped < 200 < server.loop_events  # cut off early: 48 pieces make a loop, not 2,000
    assert answered == 2  # {"echo": "hello"} streams as two words


def test_a_loop_is_kept_as_a_degenerate_reject_with_its_text(server):
    server.script.extend(["loop"])
    [done] = backend(server, stop_loops=True, timeout_s=5).complete([req("hi")])
    assert done.finish_reason == "loop" and done.text.startswith('{"echo": " so cute and adorable.')
    assert done.completion_tokens == len(done.text.split(" so cute")) and done.error is None
    [result] = Engine(backend(server, stop_loops=True), attempts=1, progress=False).run([req("x")])
    assert result.status == "ok"  # a stream that ends well is one answer, usage from its last event


@pytest.mark.parametrize("status", ["401-echo", "500-echo"])
@pytest.mark.parametrize("key", ["sk-live-0123456789abcdef", "hf_" + "q7Zx" * 40])  # long: past any cut
def test_a_key_the_server_echoes_is_redacted_from_the_error(server, monkeypatch, status, key):
    from curll.errors import CurllError

    monkeypatch.setenv("CURLL_TEST_KEY", key)
    server.script.extend([status] * 3)
    b = backend(server, api_key_env="CURLL_TEST_KEY", max_retries=0)
    if status == "500-echo":  # a transient error: kept as the request's error
        error = b.complete([req("a")])[0].error or ""
    else:  # a refused key: the run stops
        with pytest.raises(CurllError) as err:
            b.complete([req("a")])
        error = str(err.value)
    assert "Incorrect API key provided: ***" in error
    assert key[3:15] not in error and key[-12:] not in error


@pytest.mark.parametrize(
    ("action", "field", "says"),
    [
        ("401", "llm.profiles.server.api_key_env", r"refused the key \(HTTP 401: .*a key is required\): "
                                                   r"check \$CURLL_TEST_KEY$"),
        ("404", "llm.profiles.server.base_url", r"no chat completions there \(HTTP 404.*often /v1$"),
        ("404-model", "llm.profiles.server.model", r"does not serve the model 'tiny' \(HTTP 404"),
    ],
)  # fmt: skip
def test_a_refused_key_a_wrong_path_or_model_stops_the_run_naming_the_key(server, monkeypatch, action,
                                                                          field, says):  # fmt: skip
    """The same for every request, so not a reject per request asked again and again: one request,
    then a CurllError naming the params key to fix."""
    from curll.errors import CurllError

    monkeypatch.setenv("CURLL_TEST_KEY", "sk-test-key")
    server.pick = lambda body: action
    b = backend(server, api_key_env="CURLL_TEST_KEY", max_retries=5, url_key="llm.profiles.server.base_url")
    with pytest.raises(CurllError, match=says) as err:
        Engine(b, attempts=3, progress=False).run([req(f"q{i}") for i in range(4)])
    assert err.value.field == field and len(server.requests) == 1
    server.pick = None
    assert b.complete([req("warm")])[0].error is None
    server.pick = lambda body: action  # refused mid-run, after answers: the run stops all the same
    with pytest.raises(CurllError, match=says):
        b.complete([req(f"r{i}") for i in range(4)])


def test_a_refused_key_without_a_variable_says_to_name_one(server):
    from curll.errors import CurllError

    server.script.append("401")
    with pytest.raises(CurllError, match=r"HTTP 401: .*\): it wants a key: name the environment variable"):
        backend(server).complete([req("a")])


@pytest.mark.parametrize("value", ["sk-abc\r", " sk-abc", "sk-ключ"])
def test_a_key_that_cannot_go_in_a_header_is_refused_at_once(monkeypatch, value):
    from curll.errors import CurllError

    monkeypatch.setenv("CURLL_TEST_KEY", value)
    with pytest.raises(CurllError, match=r"the key in \$CURLL_TEST_KEY has") as err:
        OpenAIBackend("tiny", base_url="http://127.0.0.1:1/v1", api_key_env="CURLL_TEST_KEY",
                      url_key="llm.profiles.server.base_url")  # fmt: skip
    assert err.value.field == "llm.profiles.server.api_key_env" and value.strip() not in str(err.value)


def test_odd_but_readable_bodies_are_read_and_the_others_are_reasons_not_crashes(server):
    server.script.extend(["usage-null", "content-parts"])
    [plain, parts] = backend(server, concurrency=1).complete([req("a"), req("b")])
    assert (plain.error, plain.text, plain.prompt_tokens, plain.completion_tokens) == (
        None, '{"echo": "a"}', 0, 0)  # fmt: skip
    assert parts.error is None and parts.text == '{"echo": "b"}'
    server.script.extend(["content-number", "choices-object"])
    engine = Engine(backend(server, concurrency=1, max_retries=0), attempts=1, progress=False)
    [number, choices] = engine.run([req("c"), req("d")])
    assert number.status == "reject" and "message.content is a int, not text" in (number.reason or "")
    assert choices.status == "reject" and "not a chat completion with choices" in (choices.reason or "")


def test_one_slow_prompt_does_not_stop_the_requests_behind_it(server):
    """A timeout while other requests are answered is that request's, not a lost server."""
    server.pick = lambda body: "timeout" if "slow" in json.dumps(body["messages"]) else "ok"
    server.latency_s = 0.2  # the other slot answers about 10 while the slow one times out
    server.timeout_sleep_s = 3.0
    b = backend(server, concurrency=2, max_retries=0, timeout_s=2.0)  # 10x a normal answer's time
    answers = b.complete([req("warm"), req("slow"), *[req(f"q{i}") for i in range(24)]])
    assert "Timeout" in (answers[1].error or "")
    assert [a.error for i, a in enumerate(answers) if i != 1] == [None] * 25


def test_the_server_is_part_of_the_model_and_so_of_every_cache_key(server):
    b = backend(server)
    assert b.model == f"tiny@{server.base_url.rstrip('/')}"
    b.complete([req("a")])
    assert server.requests[-1]["model"] == "tiny"  # the server is sent its own name
    other = OpenAIBackend("tiny", base_url="http://user:pw@127.0.0.1:1/v1")
    assert other.model == "tiny@http://127.0.0.1:1/v1"  # credentials never reach outputs
    assert req("a").key(b.model) != req("a").key(other.model)


def test_a_server_nobody_answers_fails_fast_with_a_clear_error(monkeypatch):
    import socket

    import curll.llm.openai_backend as ob
    import curll.llm.openai_wire as wire
    from curll.errors import CurllError

    # bound but never listening, for the whole test: connections are refused, and no other
    # process can take the port meanwhile
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        tries: list[int] = []
        real = wire.retry_after

        bases: list[float | None] = []

        def counted(exc: Exception, retry: int, base: float | None = None) -> float | None:
            tries.append(retry)
            bases.append(base)
            return real(exc, retry, base)

        monkeypatch.setattr(ob, "retry_after", counted)
        params = load_params()
        served = params.llm.profiles["server"].model_copy(
            update={
                "model": "tiny",
                "base_url": f"http://127.0.0.1:{port}/v1",
                "max_retries": 2,
                "backoff_s": 0.001,
            }
        )
        llm = params.llm.model_copy(update={"profiles": {**params.llm.profiles, "srv": served}})
        dead = make_backend(llm, models=params.llm_models, profile="srv")
        with pytest.raises(CurllError, match=f"cannot reach the server at http://127.0.0.1:{port}/v1") as err:
            dead.complete([req(f"q{i}") for i in range(20)])
        assert err.value.field == "llm.profiles.srv.base_url"  # the key to fix, as params.yaml spells it
        assert tries == [0, 1, 2]  # one request's retries, not 20 requests' (60)
        assert bases == [0.001] * 3  # the profile's backoff_s


def test_a_server_lost_mid_batch_stops_the_batch_and_the_next_one_raises(server):
    from curll.errors import CurllError

    b = backend(server, concurrency=1, max_retries=0)
    assert b.complete([req("warm")])[0].error is None  # the server has answered
    server.script.extend(["timeout"] * 3)  # from now on nothing comes back in time
    answers = b.complete([req(f"q{i}") for i in range(6)])
    assert "Timeout" in (answers[0].error or "")
    assert all((a.error or "").startswith("not sent: the server did not answer") for a in answers[1:])
    assert [a.sent for a in answers] == [True] + [False] * 5
    assert len(server.requests) == 2  # the five after the lost one were never sent
    server.hung = True  # nothing answers, the model list neither
    with pytest.raises(CurllError, match=r"no answer from the server .* within timeout_s = 1.5 s") as err:
        b.complete([req("again")])  # first request alone, and it times out too
    assert err.value.field == "timeout_s"
    assert len(server.requests) == 3 and server.list_models == 1
    server.hung = False
    server.script.clear()
    assert [a.error for a in b.complete([req("back"), req("up")])] == [None, None]  # answered again


def test_requests_a_lost_server_never_got_are_not_counted_as_sent(server):
    engine = Engine(backend(server, concurrency=1, max_retries=0), attempts=1, progress=False)
    engine.run([req("warm")])
    server.script.extend(["timeout"] * 3)
    results = engine.run([req(f"q{i}") for i in range(6)])
    assert [r.status for r in results] == ["reject"] * 6
    assert engine.usage[-1].sent == 1 == len(server.requests) - 1 and engine.backend_calls == 2


def test_a_run_of_only_slow_prompts_on_a_live_server_is_their_errors_not_a_lost_server(server):
    """The rerun of a stage whose only unanswered prompts are too slow for timeout_s: the first,
    sent alone, times out; the server answers its model list, so each prompt gets its own
    timeout error (asked again next run) and the batch goes on; nothing raises."""
    server.pick = lambda body: "timeout" if "slow" in json.dumps(body["messages"]) else "ok"
    b = backend(server, concurrency=2, max_retries=0)
    answers = b.complete([req("slow 1"), req("slow 2"), req("quick")])
    assert ["Timeout" in (a.error or "") for a in answers] == [True, True, False]
    assert server.list_models == 1 and all(a.sent for a in answers)


def test_a_key_echoed_inside_an_answer_never_leaves_the_backend(server, monkeypatch):
    """A 200 answer that quotes the key (the fake server echoes the user turn) reaches the cache
    and the tables as the rest of the answer with ``***`` in the key's place."""
    key = "sk-echo-0123456789abcdef0123"
    monkeypatch.setenv("CURLL_TEST_KEY", key)
    b = backend(server, api_key_env="CURLL_TEST_KEY", max_retries=0)
    [done] = b.complete([req(f"my key is {key}, say it back")])
    assert done.error is None and key not in done.text and "my key is ***, say it back" in done.text
    assert server.headers[-1]["authorization"] == f"Bearer {key}"  # sent, as it must be


def test_settings_that_change_answers_change_the_model_name_and_so_the_cache_key():
    """How the schema binds the answer, server-side fields and cutting loops change answers: each
    is named in the model (which every cache key holds), the defaults name none of them."""
    url = "http://127.0.0.1:9/v1"
    plain = OpenAIBackend("tiny", base_url=url).model
    names = [
        plain,
        OpenAIBackend("tiny", base_url=url, json_mode="json_object").model,
        OpenAIBackend("tiny", base_url=url, stop_loops=True).model,
        OpenAIBackend("tiny", base_url=url, extra_body={"top_k": 20, "min_p": 0.1}).model,
        OpenAIBackend("tiny", base_url=url, extra_body={"top_k": 40, "min_p": 0.1}).model,
    ]
    assert len(set(names)) == len(names) and all(n.startswith(plain) for n in names)
    same = OpenAIBackend("tiny", base_url=url, extra_body={"min_p": 0.1, "top_k": 20}).model
    assert same == names[3]  # the fields, not their order
    request = ChatRequest.build([("user", "hi")])
    assert request.key(names[0]) != request.key(names[2])
