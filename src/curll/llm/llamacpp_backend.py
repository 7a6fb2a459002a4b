"""Backend for a local GGUF model served by llama.cpp: the CPU engine.

llama.cpp's HTTP server comes from the ``xllamacpp`` wheel (prebuilt, nothing to compile)
and runs inside this process: :class:`LlamaCppBackend` starts ``servers`` of them on
first use and answers through :class:`~curll.llm.openai_backend.OpenAIBackend`, the real
OpenAI client against the real servers (``response_format: json_schema``, which llama.cpp
turns into a grammar, so every answer is schema-valid JSON up to ``max_tokens``).
``timeout_s`` is that backend's deadline for each request as a whole, and answers are
reported to the engine's ``on_answer`` as each comes (see :mod:`curll.llm.protocol`).

- Lifetime: :meth:`LlamaCppBackend.close` stops the servers; the engine closes its backend
  when a stage ends, also on an error. The servers are threads of this process, so no
  signal, ``kill -9`` included, can leave one running after its stage.
- Ports: each server binds 127.0.0.1 on a port the OS picks (port 0), so shards, parallel
  stages and tests never collide. Nothing listens beyond loopback.
- A model file that is missing, not GGUF, not the one params name (``sha256``), or that
  llama.cpp cannot load is a :class:`CurllError` naming the file (llama.cpp's own reason
  is printed above it).
- Reproducibility: the same request gets the same answer, byte for byte, whatever was
  asked before and whichever server answers (measured: ``bench/llm_backends.py``):
  every server has one slot (``parallel: 1``); flash attention is off (llama.cpp's CPU
  flash attention splits each query's keys between threads, so answers changed with the
  thread count and with the other requests in a step); the prompt cache is off (an
  answer that reused another request's prefix differed from one computed whole). The
  sampling seed is drawn from the request's content key, as in the transformers backend.
- Sampling: temperature and top-p as asked; llama.cpp's own top-k (40) and min-p (0.05)
  are switched off, so the profile's sampling means what it means on other backends.
- ``model`` (the name on every row and in every cache key) is ``<name>@<sha256 of the
  file, 12 hex>+llama.cpp-<xllamacpp version>``, plus ``+parallel-<n>`` with several slots
  and ``+no-stop-loops`` without loop stopping, the settings that change answers: another
  file, engine release or such setting never reuses cached answers. Threads and servers do
  not change answers and are not part of it, nor are the ports, which change every run.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from curll.errors import CurllError
from curll.llm.identity import request_seed, tagged
from curll.llm.openai_backend import OpenAIBackend
from curll.llm.protocol import OnAnswer
from curll.llm.types import ChatRequest, Completion

#: sent with every request: see the module docstring
EXTRA_BODY = {"cache_prompt": False, "top_k": 0, "min_p": 0.0}
NO_SEED = 0xFFFFFFFF  # llama.cpp's "pick a random seed": never sent


def engine_version() -> str:
    """The installed ``xllamacpp`` release (its llama.cpp build), without importing it."""
    try:
        return metadata.version("xllamacpp")
    except metadata.PackageNotFoundError:
        raise CurllError("the llamacpp backend needs xllamacpp: pip install xllamacpp") from None


class LlamaCppBackend:
    name = "llamacpp"

    def __init__(
        self,
        gguf: str | Path,
        *,
        name: str,
        sha256: str | None = None,
        threads: int = 1,
        servers: int = 1,
        parallel: int = 1,
        context: int = 2048,
        timeout_s: float = 600.0,
        stop_loops: bool = True,
    ) -> None:
        from curll.llm.gguf import check_gguf, checked_sha256

        self.path = Path(gguf)
        check_gguf(self.path)
        digest = checked_sha256(self.path, sha256, name)
        self.model = tagged(
            f"{name}@{digest[:12]}",
            f"llama.cpp-{engine_version()}",
            # answers then depend on which requests shared a step: never mix them
            f"parallel-{parallel}" if parallel > 1 else None,
            # a loop runs to max_tokens instead of being cut off: another answer
            None if stop_loops else "no-stop-loops",
        )
        self.threads, self.servers, self.parallel, self.context = threads, servers, parallel, context
        self.timeout_s = timeout_s
        self.stop_loops = stop_loops
        self._running: list[Any] = []  # xllamacpp.Server objects; dropping one stops it
        self._client: OpenAIBackend | None = None

    def __repr__(self) -> str:
        return f"LlamaCppBackend({self.path.name!r}, servers={self.servers}, threads={self.threads})"

    def start(self) -> list[str]:
        """Start the servers (once); their base URLs."""
        if self._client is None:
            self._running = [self._start_one() for _ in range(self.servers)]
            urls = [s.listening_address.rstrip("/") + "/v1" for s in self._running]
            self._client = OpenAIBackend(
                self.model, base_url=urls, concurrency=self.parallel, timeout_s=self.timeout_s,
                max_retries=2, json_mode="json_schema", extra_body=EXTRA_BODY, stop_loops=self.stop_loops,
            )  # fmt: skip
            self._client.model = self.model
        return list(self._client.base_urls)

    def _start_one(self) -> Any:
        import xllamacpp

        p = xllamacpp.CommonParams()
        p.model.path = str(self.path)
        p.hostnames = ["127.0.0.1"]
        p.port = 0  # the OS picks a free port
        p.n_parallel = self.parallel
        p.n_ctx = self.context * self.parallel  # each slot gets n_ctx / n_parallel
        p.cpuparams.n_threads = self.threads
        p.cpuparams_batch.n_threads = self.threads
        p.flash_attn_type = xllamacpp.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_DISABLED
        p.verbosity = 1  # errors only
        try:
            server = xllamacpp.Server(p)
        except RuntimeError as exc:
            self.close()
            raise CurllError(f"llama.cpp could not start a server for this model ({exc}; its log above "
                             "says why)", file=self.path) from None  # fmt: skip
        _wait_for_loop(server.listening_address)
        return server

    def complete(
        self, requests: Sequence[ChatRequest], on_answer: OnAnswer | None = None
    ) -> list[Completion]:
        """One completion per request, in order; ``on_answer(i, completion)`` as each is final."""
        self.start()
        assert self._client is not None
        seeded = [
            dataclasses.replace(r, sampling=dataclasses.replace(r.sampling, seed=self.seed(r)))
            for r in requests
        ]
        return self._client.complete(seeded, on_answer=on_answer)

    def seed(self, request: ChatRequest) -> int:
        """The sampling seed sent for ``request``: from its content key, in llama.cpp's 32 bits."""
        return request_seed(request, self.model) % NO_SEED

    def close(self) -> None:
        """Stop the servers (each waits for its loop to exit); the next request starts them again."""
        self._client = None
        while self._running:
            self._running.pop()


def _wait_for_loop(address: str, timeout_s: float = 120.0) -> None:
    """Return once the server's task loop answers (``GET /slots`` is a task it serves).

    ``xllamacpp.Server()`` returns just before that loop starts, and a server stopped in
    between never stops: the stop is lost and its destructor waits forever (seen here, about
    one start in three when a server was stopped at once). So a server counts as started only
    when its loop has answered."""
    import httpx

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if httpx.get(address.rstrip("/") + "/slots", timeout=10).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise CurllError(f"the llama.cpp server at {address} did not answer in {timeout_s:.0f} s")
        time.sleep(0.01)
