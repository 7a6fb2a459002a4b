"""A real HTTP server implementing ``POST /v1/chat/completions`` on 127.0.0.1, for tests
and benchmarks of the ``openai`` backend.

Its answer is a deterministic function of the request (``{"echo": <last user message>}``),
so runs can be compared row for row. ``script`` is a queue of misbehaviours consumed one
per request before normal answers resume: ``"429"``, ``"500"``, ``"timeout"`` (sleep past
the client's timeout), ``"malformed"`` (HTTP 200 with a broken JSON body), ``"not-json"``
(a valid envelope whose content is not JSON), ``"schema-invalid"`` (JSON content that
matches no task schema), ``"400"`` (an invalid request), ``"503"``, ``"500-invalid"``
(llama.cpp's way of refusing an unsupported ``response_format``), ``"401"`` (a key is
required), ``"400-echo"``, ``"401-echo"`` and ``"500-echo"`` (the key echoed back in the error, as
OpenAI does), ``"400-long"`` (an error message of 100,000 characters),
``"403"``, ``"404"`` (no such path), ``"404-model"`` (no such model), error bodies not in OpenAI's
form (``"400-detail"``: FastAPI's ``{"detail": ...}``; ``"404-ollama"``: ``{"error": "<text>"}``
naming a missing model; ``"502-html"``: a proxy's HTML page), ``"trickle"`` (headers at
once, then the body a byte every ``trickle_s``: never idle, never on time), and 200 bodies of odd
shape: ``"usage-null"`` (null token counts), ``"content-parts"`` (content as a list of text
parts), ``"content-number"`` (content a number), ``"content-null"`` (no content, the answer in
``reasoning_content`` as a reasoning parser leaves it), ``"refusal"`` (no content, a refusal)
and ``"choices-object"`` (choices not a list); ``"error-200"`` (an error sent with status 200),
``"gzip-bad"`` (a body said to be gzip that is not), ``"huge"`` (content of ``huge_chars``
characters), ``"sse"`` (server-sent events to a request that did not ask for a stream) and
``"301"`` (a redirect to ``redirect_to``, the same path by default). With the script
empty, ``pick(body)`` (when set) chooses each request's action. ``latency_s`` delays every
answer; while ``gate`` is cleared every request waits, in flight, until it is set.
``GET /v1/models`` lists the one model (``list_models`` counts those requests); with ``hung``
set it sleeps past the client's timeout instead, as a server that takes connections and
answers nothing.

A request with ``"stream": true`` is answered as server-sent events, one word per event
(``"loop"``: the same sentence over and over, up to ``loop_events`` events; ``"stream-cut"``:
half the answer's events, then the connection closes with no finish_reason; ``"stream-broken"``:
the same, but the headers promised a longer body, so the client sees a body cut off; ``streamed``
counts the events each such request got out before the client hung up).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class FakeChatServer:
    def __init__(self, *, latency_s: float = 0.0, timeout_sleep_s: float = 2.0, port: int = 0) -> None:
        self.latency_s = latency_s
        self.gate = threading.Event()  #: cleared: every request waits (in flight) until it is set
        self.gate.set()
        self.timeout_sleep_s = timeout_sleep_s
        self.trickle_s = 0.3  #: action "trickle": headers at once, then one body byte this often
        self.script: deque[str] = deque()
        self.pick: Callable[[dict[str, Any]], str] | None = None
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.loop_events = 2000
        self.hung = False  #: GET /v1/models sleeps past the client's timeout too
        self.huge_chars = 2_000_000  #: the content length of a ``"huge"`` answer
        self.redirect_to = ""  #: where ``"301"`` points (empty: the request's own URL)
        self.list_models = 0
        self.streamed: list[int] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())  # 0: any free port
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def streams(self, n: int, timeout_s: float = 5.0) -> list[int]:
        """``streamed`` once it holds ``n`` streams: a stream is counted after its last byte is
        sent, so the client can be done with it a moment before the server is."""
        deadline = time.monotonic() + timeout_s
        while len(self.streamed) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        with self._lock:
            return list(self.streamed)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def answer(self, body: dict[str, Any]) -> str:
        last = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        return json.dumps({"echo": last})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(status)
                    headers = {"Content-Type": "application/json", **(headers or {})}
                    self.send_header("Content-Length", str(len(payload)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def do_GET(self) -> None:
                with server._lock:
                    server.list_models += 1
                if server.hung:
                    time.sleep(server.timeout_sleep_s)
                    return
                listed = {"object": "list", "data": [{"id": "tiny", "object": "model", "owned_by": "curll"}]}
                self._send(200, json.dumps(listed).encode())

            def do_POST(self) -> None:
                try:
                    body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                except ValueError:  # a body cut short: the client was killed while sending it
                    return
                with server._lock:
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    if server.script:
                        action = server.script.popleft()
                    else:
                        action = server.pick(body) if server.pick else "ok"
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._respond(action, body)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _respond(self, action: str, body: dict[str, Any]) -> None:
                server.gate.wait()
                if server.latency_s:
                    time.sleep(server.latency_s)
                fast_retry = {"retry-after-ms": "5"}
                if action == "429":
                    return self._send(429, b'{"error": {"message": "slow down"}}', fast_retry)
                if action == "500":
                    return self._send(500, b'{"error": {"message": "boom"}}', fast_retry)
                if action == "503":
                    return self._send(503, b'{"error": {"message": "overloaded"}}', {"retry-after": "0.01"})
                if action == "400":
                    error = {"message": "invalid request: bad field", "type": "invalid_request_error"}
                    return self._send(400, json.dumps({"error": error}).encode())
                if action == "500-invalid":
                    return self._send(
                        500, b'{"error": {"code": 500, "message": "Unsupported response_format type"}}'
                    )
                if action == "401":
                    return self._send(401, b'{"error": {"message": "a key is required"}}')
                if action in ("400-echo", "401-echo", "500-echo"):  # as OpenAI does: the key and header in it
                    sent = self.headers.get("Authorization", "")
                    key = sent.removeprefix("Bearer ")
                    message = f"Incorrect API key provided: {key}. Header was: Authorization: {sent}"
                    payload = json.dumps({"error": {"message": message}}).encode()
                    return self._send(int(action[:3]), payload, fast_retry)
                if action == "400-long":  # a server that quotes the whole request back in its error
                    error = {"message": "invalid request: " + "x" * 100_000, "type": "invalid_request_error"}
                    return self._send(400, json.dumps({"error": error}).encode())
                if action == "403":
                    return self._send(403, b'{"error": {"message": "this key may not use this project"}}')
                if action == "404":
                    return self._send(404, b"Not Found")
                if action == "404-model":
                    return self._send(404, b'{"error": {"message": "The model does not exist.", "code": '
                                           b'"model_not_found"}}')  # fmt: skip
                if action == "400-detail":
                    return self._send(400, b'{"detail": "max_tokens too large for the context"}')
                if action == "404-ollama":
                    return self._send(404, b'{"error": "model \\"tiny\\" not found, try pulling it first"}')
                if action == "502-html":
                    page = (b"<html><head><title>502</title><style>h1 {color: red}</style></head>"
                            b"<body><h1>502 Bad Gateway</h1><script>var x = 'not supported';</script>"
                            b"</body>")  # fmt: skip
                    return self._send(502, page, {"Content-Type": "text/html"})
                if action == "error-200":
                    return self._send(200, b'{"error": {"message": "the model is overloaded"}}')
                if action == "gzip-bad":
                    return self._send(200, b"this is not gzip", {"Content-Encoding": "gzip"})
                if action == "301":
                    return self._send(
                        301, b"", {"Location": server.redirect_to or server.base_url + self.path[3:]}
                    )
                if action == "sse":
                    return self._send(200, b'data: {"choices": []}\n\ndata: [DONE]\n\n',
                                      {"Content-Type": "text/event-stream"})  # fmt: skip
                if action == "timeout":
                    time.sleep(server.timeout_sleep_s)
                if action == "malformed":
                    return self._send(200, b'{"id": "x", "choices": [{"message": ')
                if body.get("stream"):
                    return self._stream(action, body)
                content = {"not-json": "this is not JSON", "schema-invalid": '{"unexpected": true}',
                           "huge": "x" * server.huge_chars}.get(action) or server.answer(body)  # fmt: skip
                reply = {
                    "id": f"chatcmpl-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": content},
                        }
                    ],
                    "usage": {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12},
                }
                odd: dict[str, Any] = {
                    "usage-null": {"usage": {"prompt_tokens": None, "completion_tokens": None}},
                    "content-parts": {"choices": [{"finish_reason": "stop", "message": {"role": "assistant",
                                      "content": [{"type": "text", "text": content}]}}]},
                    "content-number": {"choices": [{"finish_reason": "stop", "message": {"content": 123}}]},
                    "content-null": {"choices": [{"finish_reason": "stop", "message": {"role": "assistant",
                                     "content": None, "reasoning_content": content}}]},
                    "refusal": {"choices": [{"finish_reason": "stop", "message": {"role": "assistant",
                                "content": None, "refusal": "I cannot help with that."}}]},
                    "choices-object": {"choices": {"0": reply["choices"][0]}},
                }  # fmt: skip
                reply.update(odd.get(action, {}))
                if action == "trickle":
                    return self._trickle(json.dumps(reply).encode())
                return self._send(200, json.dumps(reply).encode())

            def _trickle(self, payload: bytes) -> None:
                """A server that never goes quiet yet never finishes in time."""
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.flush()
                    for i in range(len(payload)):
                        time.sleep(server.trickle_s)
                        self.wfile.write(payload[i : i + 1])
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up: its deadline

            def _stream(self, action: str, body: dict[str, Any]) -> None:
                if action == "loop":
                    words = ['{"echo": "'] + [" so cute and adorable."] * server.loop_events + ['"}']
                elif action == "huge":  # pieces of 1,000 characters
                    n = server.huge_chars
                    words = [p for p in ["x" * 1000] * (n // 1000) + ["x" * (n % 1000)] if p]
                else:
                    words = [w + " " for w in server.answer(body).split(" ")]
                    words[-1] = words[-1].rstrip()
                cut = action in ("stream-cut", "stream-broken")
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                if action == "stream-broken":  # more than will come: the close breaks the body
                    self.send_header("Content-Length", "1000000")
                self.end_headers()
                sent = 0
                try:
                    for w in words[: len(words) // 2] if cut else words:
                        chunk = {
                            "id": "c",
                            "object": "chat.completion.chunk",
                            "created": 0,
                            "model": "m",
                            "choices": [{"index": 0, "delta": {"content": w}, "finish_reason": None}],
                        }
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        sent += 1
                        time.sleep(0.0005)
                    if cut:  # the connection closes mid-answer: no finish, no [DONE]
                        self.close_connection = True
                        return
                    last = {
                        "id": "c",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": "m",
                        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 7, "completion_tokens": sent, "total_tokens": 7 + sent},
                    }
                    self.wfile.write(f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode())
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client hung up: what stop_loops does to a loop
                with server._lock:
                    server.streamed.append(sent)

        return Handler
