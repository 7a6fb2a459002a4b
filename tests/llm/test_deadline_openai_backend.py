"""The openai backend's ``timeout_s`` is a deadline for the whole HTTP request, not an idle timeout.

A real HTTP server on loopback sends its response headers at once, then trickles the body
a byte every 0.3 s: it never goes quiet for ``timeout_s``, yet the answer would take a
minute. The request must be cut off ``timeout_s`` after it was sent and go through the
usual retry path (a timeout after the headers: the server did answer, so no "cannot reach
the server" error)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from curll.llm.openai_backend import OpenAIBackend
from curll.llm.types import ChatRequest

BYTE_EVERY_S = 0.3


def reply(body: dict[str, Any]) -> bytes:
    message = {"role": "assistant", "content": json.dumps({"echo": "x" * 100})}
    choice = {"index": 0, "finish_reason": "stop", "message": message}
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    head = {"id": "c", "object": "chat.completion", "created": 0, "model": body["model"]}
    return json.dumps({**head, "choices": [choice], "usage": usage}).encode()


def stream_reply(body: dict[str, Any]) -> bytes:
    choice = {"index": 0, "delta": {"content": "x" * 100}, "finish_reason": None}
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
    return f"data: {json.dumps({**chunk, 'choices': [choice]})}\n\ndata: [DONE]\n\n".encode()


class TrickleServer:
    """Answers every POST with its headers at once, then the body one byte per ``BYTE_EVERY_S``."""

    def __init__(self) -> None:
        self.requests = 0
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests += 1
                payload = stream_reply(body) if body.get("stream") else reply(body)
                self.send_response(200)
                if body.get("stream"):
                    self.send_header("Content-Type", "text/event-stream")
                else:
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.flush()
                try:
                    for i in range(len(payload)):
                        if server.stop.wait(BYTE_EVERY_S):
                            return
                        self.wfile.write(payload[i : i + 1])
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client hung up: what the deadline does

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def trickle_s(self) -> float:
        return len(reply({"model": "tiny"})) * BYTE_EVERY_S


@pytest.fixture
def trickle() -> Iterator[TrickleServer]:
    srv = TrickleServer()
    srv.thread.start()
    try:
        yield srv
    finally:
        srv.stop.set()
        srv.httpd.shutdown()
        srv.httpd.server_close()


def req(text: str) -> ChatRequest:
    return ChatRequest.build([("user", text)])


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_trickling_answer_is_cut_off_at_the_deadline(trickle, stream):
    assert trickle.trickle_s() > 30  # what an idle timeout would wait
    b = OpenAIBackend("tiny", base_url=trickle.base_url, timeout_s=1, max_retries=0, stop_loops=stream)
    start = time.monotonic()
    [done] = b.complete([req("hello")])  # an error completion: it does not raise
    elapsed = time.monotonic() - start
    assert elapsed < 5, f"held {elapsed:.1f} s with timeout_s = 1"
    assert done.error is not None and "Timeout" in done.error and "timeout_s = 1 s" in done.error
    assert done.text == "" and trickle.requests == 1


def test_a_timed_out_request_is_retried_up_to_max_retries(trickle):

    b = OpenAIBackend("tiny", base_url=trickle.base_url, timeout_s=0.5, max_retries=2, backoff_s=0.01)
    start = time.monotonic()
    answers = b.complete([req("a"), req("b")])
    assert time.monotonic() - start < 10
    assert all(a.error is not None and "after the response headers" in a.error for a in answers)
    assert trickle.requests == 6  # each request asked 1 + max_retries times
