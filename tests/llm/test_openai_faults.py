"""The openai backend against servers that misbehave in ways a healthy test server never does:
a Retry-After it must read (seconds, milliseconds, an HTTP date) or ignore (garbage), a stream
cut off mid-answer, a replica that is down, the client's own environment variables, an error
text of 100 KB. Each runs against a real local HTTP server (harness.server)."""

from __future__ import annotations

import json
import math
import socket
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx2 as httpx  # the openai client's transport
import openai
import pytest

from curll.llm.openai_backend import OpenAIBackend
from curll.llm.openai_wire import SAID_CHARS, SERVER_WAIT_MAX_S, retry_after, server_wait
from curll.llm.types import ChatRequest
from harness.server import FakeChatServer

SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"echo": {"type": "string"}},
    "required": ["echo"],
}


def req(text: str) -> ChatRequest:
    return ChatRequest.build([("system", "Answer in JSON."), ("user", text)], schema=SCHEMA)


@pytest.fixture
def server():
    with FakeChatServer() as srv:
        yield srv


def http_date(seconds_from_now: float) -> str:
    return format_datetime(datetime.now(UTC) + timedelta(seconds=seconds_from_now), usegmt=True)


def test_retry_after_is_read_as_seconds_milliseconds_or_an_http_date():
    assert server_wait({"retry-after": "2"}) == 2.0
    assert server_wait({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5  # the finer one first
    assert 5.0 < (server_wait({"retry-after": http_date(7)}) or 0) <= 7.0  # a date: to the second
    assert server_wait({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # passed: at once
    asctime = (datetime.now(UTC) + timedelta(seconds=7)).strftime("%a %b %d %H:%M:%S %Y")  # GMT, no zone
    assert 5.0 < (server_wait({"retry-after": asctime}) or 0) <= 7.0
    assert server_wait({"retry-after": "86400"}) == SERVER_WAIT_MAX_S


@pytest.mark.parametrize("bad", ["-5", "nan", "inf", "soon", "", "Wed, 21 Oct 2015 07:28:00 -0000"])
def test_a_retry_after_that_means_nothing_falls_back_to_the_backoff_never_to_no_wait(bad):
    assert server_wait({"retry-after": bad}) is None
    assert server_wait({"retry-after-ms": bad, "retry-after": "3"}) == 3.0
    response = httpx.Response(429, headers={"retry-after": bad}, request=httpx.Request("POST", "http://x/v1"))
    wait = retry_after(openai.RateLimitError("slow down", response=response, body=None), retry=3)
    assert wait is not None and math.isfinite(wait) and wait > 0


def test_a_429_with_an_http_date_is_retried_no_sooner_than_it_asks():
    response = httpx.Response(
        429, headers={"retry-after": http_date(4)}, request=httpx.Request("POST", "http://x")
    )
    assert (retry_after(openai.RateLimitError("slow down", response=response, body=None), retry=0) or 0) > 2.0


def test_a_stream_cut_off_mid_answer_is_asked_again_never_kept(server):
    server.script.extend(["stream-cut"])
    b = OpenAIBackend("tiny", base_url=server.base_url, timeout_s=5, stop_loops=True)
    [done] = b.complete([req("a whole answer of several words")])
    assert done.error is None and done.finish_reason == "stop"
    assert done.text == server.answer(server.requests[-1]) and len(server.requests) == 2


def test_a_stream_always_cut_off_is_an_error_that_may_pass(server):
    server.pick = lambda body: "stream-cut"
    b = OpenAIBackend("tiny", base_url=server.base_url, timeout_s=5, stop_loops=True, max_retries=1)
    [done] = b.complete([req("a whole answer of several words")])
    assert done.text == "" and done.transient and "no finish_reason" in (done.error or "")


@pytest.mark.parametrize("dead_first", [True, False])
def test_a_replica_that_is_down_costs_retries_not_answers(server, dead_first):

    with socket.socket() as s:  # bound, never listening: connections are refused
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        urls = [dead, server.base_url] if dead_first else [server.base_url, dead]
        b = OpenAIBackend("tiny", base_url=urls, concurrency=2, timeout_s=5, max_retries=3, backoff_s=0.001)
        done = b.complete([req(f"q{i}") for i in range(12)])
    assert [d.error for d in done] == [None] * 12
    assert sorted(r["messages"][-1]["content"] for r in server.requests) == sorted(f"q{i}" for i in range(12))


def test_replicas_all_down_stop_the_run_naming_the_one_that_failed_last():
    from curll.errors import CurllError

    with socket.socket() as a, socket.socket() as b:
        for s in (a, b):
            s.bind(("127.0.0.1", 0))
        urls = [f"http://127.0.0.1:{s.getsockname()[1]}/v1" for s in (a, b)]
        backend = OpenAIBackend("tiny", base_url=urls, timeout_s=5, max_retries=2, backoff_s=0.001)
        with pytest.raises(CurllError, match=r"cannot reach the server at \S+ \(of .+\) \(2 ret") as e:
            backend.complete([req("q")])
    last, among = e.value.args[0].split("server at ")[1].split(" (of ")
    assert last in urls and among.startswith(", ".join(urls))


def test_only_the_key_of_api_key_env_reaches_the_server(server, monkeypatch):
    monkeypatch.setenv("OPENAI_ORG_ID", "org-secretorg")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-this-one")
    monkeypatch.delenv("CURLL_NO_SUCH_KEY", raising=False)
    b = OpenAIBackend("tiny", base_url=server.base_url, api_key_env="CURLL_NO_SUCH_KEY")
    [done] = b.complete([req("a")])
    sent = server.headers[0]
    assert done.error is None and sent["authorization"] == "Bearer EMPTY"
    assert not {"openai-organization", "openai-project"} & set(sent)
    assert "secret" not in repr(sent) and "not-this-one" not in repr(sent)


def test_a_huge_error_text_is_cut_to_a_readable_reason(server):
    server.script.append("400-long")
    [done] = OpenAIBackend("tiny", base_url=server.base_url, timeout_s=5).complete([req("a")])
    assert done.error is not None and "invalid request" in done.error and len(done.error) <= SAID_CHARS


def test_a_slow_answer_is_not_a_dead_replica():
    """A timeout before the headers may be one slow prompt on a healthy server: it spends the
    request's retries as on one server and rests no replica."""

    with FakeChatServer(timeout_sleep_s=1.0) as a, FakeChatServer(timeout_sleep_s=1.0) as b:
        for s in (a, b):
            s.pick = lambda body: "timeout" if "slow" in json.dumps(body["messages"]) else "ok"
        backend = OpenAIBackend(
            "tiny", base_url=[a.base_url, b.base_url], timeout_s=0.3, max_retries=1, backoff_s=0.001
        )
        done = backend.complete([req("fast"), req("slow"), req("fast too")])
    assert [d.error is None for d in done] == [True, False, True]
    slow = [r for s in (a, b) for r in s.requests if "slow" in json.dumps(r["messages"])]
    assert len(slow) == 2  # max_retries + 1, not that times the replicas
    assert backend._down == {}  # no replica rested


def test_a_body_that_cannot_be_decoded_is_asked_again_not_a_crash(server):
    server.script.append("gzip-bad")
    [done] = OpenAIBackend("tiny", base_url=server.base_url, timeout_s=5).complete([req("a")])
    assert (
        done.error is None and done.text == server.answer(server.requests[-1]) and len(server.requests) == 2
    )
    server.pick = lambda body: "gzip-bad"
    [bad] = OpenAIBackend("tiny", base_url=server.base_url, timeout_s=5, max_retries=1).complete([req("b")])
    assert bad.text == "" and bad.transient and "DecodingError" in (bad.error or "")


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_longer_than_max_tokens_can_make_is_not_read_whole_nor_kept(server, stream):
    """max_tokens 4: at most 4 x 64 characters of text; the 2 MB body is cut off by its size
    (read whole it would pass the text limit too), 300 characters by the text limit."""
    from curll.sampling import Sampling

    short = ChatRequest.build([("user", "a")], sampling=Sampling(max_tokens=4))
    b = OpenAIBackend("tiny", base_url=server.base_url, timeout_s=5, max_retries=0, stop_loops=stream)
    for chars, said in ((2_000_000, "body in bytes" if not stream else "text in characters"),
                        (300, "text in characters")):  # fmt: skip
        server.huge_chars = chars
        server.pick = lambda body: "huge"
        [done] = b.complete([short])
        assert done.text == "" and done.transient and f"answer's {said} passed" in (done.error or "")
        assert "max_tokens = 4" in (done.error or "")
    server.pick = None
    [fits] = b.complete([ChatRequest.build([("user", "y" * 200)], sampling=Sampling(max_tokens=4))])
    assert fits.error is None  # 212 characters: within 256


def test_a_redirect_stops_the_run_naming_base_url_and_where_it_points(server):
    from curll.errors import CurllError

    server.script.append("301")
    server.redirect_to = "https://example.invalid/v1/chat/completions"
    b = OpenAIBackend("tiny", base_url=server.base_url, timeout_s=5, url_key="llm.profiles.s.base_url")
    with pytest.raises(
        CurllError, match=r"redirects \(HTTP 301 to https://example.invalid/v1/chat/completions\)"
    ):
        b.complete([req("a")])
    assert len(server.requests) == 1  # asked once, not followed, not retried


def test_a_refused_key_chains_no_server_error_that_holds_it(server, monkeypatch):
    import traceback

    from curll.errors import CurllError

    monkeypatch.setenv("CURLL_PROBE_KEY", "sk-probeSECRET123")
    server.script.append("401-echo")
    b = OpenAIBackend("tiny", base_url=server.base_url, api_key_env="CURLL_PROBE_KEY", timeout_s=5)
    with pytest.raises(CurllError, match="refused the key") as e:
        b.complete([req("a")])
    assert e.value.__context__ is None and e.value.__cause__ is None
    assert "probeSECRET" not in "".join(traceback.format_exception(e.value))


SAID_200 = [("error-200", "the server answered with an error, not a completion: the model is overloaded"),
            ("sse", "the answer is not JSON (it starts 'data: ")]  # fmt: skip


@pytest.mark.parametrize(("action", "said"), SAID_200)
def test_a_200_that_is_no_completion_says_what_came(server, action, said):
    server.pick = lambda body: action
    [done] = OpenAIBackend("tiny", base_url=server.base_url, timeout_s=5, max_retries=0).complete([req("a")])
    assert done.text == "" and done.transient and said in (done.error or ""), done.error


def test_waits_of_a_retry_after_are_at_least_it_spread_and_grow_with_the_retries():
    response = httpx.Response(429, headers={"retry-after": "1"}, request=httpx.Request("POST", "http://x"))
    error = openai.RateLimitError("slow down", response=response, body=None)
    first = [retry_after(error, retry=0) or 0 for _ in range(50)]
    assert all(1.0 <= w <= 1.25 for w in first) and len(set(first)) > 40  # no lock-step
    assert min(retry_after(error, retry=6) or 0 for _ in range(50)) >= 15.0  # the backoff's half of 30 s


def test_a_stream_whose_body_breaks_is_asked_again_and_stops_no_other_request(server):
    """A streamed body that broke after the headers (the client wraps the cut in its
    APIConnectionError) was taken for an unreachable server: the run stopped naming base_url,
    and requests still queued were never sent to a server that was answering."""
    server.pick = lambda body: "stream-broken" if "cut" in body["messages"][-1]["content"] else "ok"
    b = OpenAIBackend("tiny", base_url=server.base_url, timeout_s=5, stop_loops=True, max_retries=1,
                      backoff_s=0.001, concurrency=2)  # fmt: skip
    asked = ["ok first"] + [f"cut {i}" for i in range(2)] + [f"ok {i}" for i in range(3)]
    done = b.complete([req(q) for q in asked])
    assert [d.error is None for d in done] == [True, False, False, True, True, True], [d.error for d in done]
    for d in done[1:3]:
        assert d.transient and d.sent is not False, d.error
        assert "the stream broke off after" in (d.error or ""), d.error
    server.pick = None
    server.script.append("stream-broken")
    [again] = b.complete([req("cut once")])
    assert again.error is None and again.text == server.answer(server.requests[-1])


@pytest.mark.parametrize(
    ("action", "said"),
    [("400-detail", "Error code: 400 - max_tokens too large for the context"),
     ("502-html", "Error code: 502 - 502 502 Bad Gateway")],  # no style or script: not "not supported"
)  # fmt: skip
def test_an_error_body_in_another_form_than_openais_keeps_the_servers_reason(server, action, said):
    """The client reads a reason only from ``{"error": {"message": ...}}``: the reason of a
    FastAPI server or a proxy's page was lost, leaving a bare "Error code: 400"."""
    server.pick = lambda body: action
    b = OpenAIBackend("tiny", base_url=server.base_url, timeout_s=5, max_retries=0)
    [done] = b.complete([req("a")])
    assert done.text == "" and said in (done.error or ""), done.error
    if action == "502-html":  # a page's style and script are no reason, and "not supported" in a
        assert "color" not in (done.error or "") and "supported" not in (done.error or "")
        assert done.transient  # script made the 502 final as an invalid request: it is retried


def test_a_404_whose_text_names_a_missing_model_names_the_model_key(server):
    from curll.errors import CurllError

    server.script.append("404-ollama")
    b = OpenAIBackend("tiny", base_url=server.base_url, timeout_s=5, url_key="llm.profiles.s.base_url")
    with pytest.raises(CurllError, match=r'does not serve the model .*model "tiny" not found') as e:
        b.complete([req("a")])
    assert e.value.field == "llm.profiles.s.model"


def test_an_ipv6_server_keeps_its_brackets():
    from curll.llm.redact import server_of

    assert server_of("http://user:pw@[::1]:8000/v1/") == "http://[::1]:8000/v1"
    assert server_of("http://[fe80::1]/v1") == "http://[fe80::1]/v1"
    assert server_of("https://host.example:8443/v1") == "https://host.example:8443/v1"
