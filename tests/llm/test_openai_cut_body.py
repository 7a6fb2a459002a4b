"""A server that sends its headers, then drops the connection before the body ends (a restart
mid-answer): the request is retried, then fails alone, never the whole batch."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from curll.llm.openai_backend import OpenAIBackend
from curll.llm.types import ChatRequest


class Handler(BaseHTTPRequestHandler):
    calls = 0

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).calls += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "500")  # promised, never sent
        self.end_headers()
        self.wfile.write(json.dumps({"id": "c"}).encode()[:5])
        self.wfile.flush()
        self.close_connection = True


def test_a_body_cut_short_is_a_retried_error_completion_not_a_crash():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        host, port = httpd.server_address[:2]
        url = f"http://{host!s}:{port}/v1"
        backend = OpenAIBackend("m", base_url=url, timeout_s=10, max_retries=2, concurrency=2)
        out = backend.complete([ChatRequest.build([("user", f"q{i}")]) for i in range(2)])
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert [c.error is not None for c in out] == [True, True]
    assert Handler.calls == 2 * 3  # each request: the first try and two retries
