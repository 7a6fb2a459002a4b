"""Backend for any OpenAI-compatible chat server (vLLM, SGLang, TGI, llama.cpp, hosted APIs).

- Async requests through the official ``openai`` client with at most ``concurrency``
  in flight per server (a queue of free slots).
- ``timeout_s`` is a deadline for each HTTP request as a whole (connecting, the response
  headers and the whole body, streamed or not), not an idle timeout: a server that
  trickles its answer a byte at a time is cut off (the connection closed) ``timeout_s``
  after the request was sent, and the attempt counts as a timeout.
- Retries are ours (the client's own are off), so an invalid request is never retried:
  connection errors, timeouts, 408, 409, 429 and 5xx are retried up to ``max_retries``
  times with exponential backoff and jitter, waiting at least a ``Retry-After``; any other 4xx,
  and a 5xx whose message says the request itself is invalid or unsupported (llama.cpp
  answers an unknown ``response_format`` with HTTP 500), fails at once. A timeout before
  the response headers came counts as a lost connection (below); one after them is the
  server's (it answered, too slowly).
- A refused key (401), a path or model the server lacks (404) or a redirect (3xx: never
  followed, as a 301 or 302 would turn the POST into a GET) is the params' fault, the same
  for every request: :meth:`OpenAIBackend.complete` raises a :class:`CurllError` naming
  ``api_key_env``, ``base_url`` or ``model`` at once, with no server error chained to it. A
  key with white space around it or a character a header cannot carry is refused at
  construction. A 200 body that is not a chat
  completion (:func:`curll.llm.openai_wire.completion_fields`), or an answer longer than its
  ``max_tokens`` could make (:func:`curll.llm.openai_wire.answer_limits`: the body is read only
  up to its byte limit, and its text is checked against the character limit),
  is a ValueError, retried like a malformed body.
- ``complete(requests, on_answer)`` calls ``on_answer(index, completion)`` as each request
  finishes (its retries done), from the calling thread (the requests are tasks of one
  event loop there), so the engine stores each answer as it comes.
- ``json_mode`` says how a schema reaches the server: ``json_schema`` (OpenAI's
  ``response_format``), ``json_object`` (JSON mode, schema unenforced), ``llamacpp``
  (``{"type": "json_object", "schema": ...}``), ``vllm`` (``structured_outputs``), or
  ``none``. The schema keeps its task's key order. The engine validates the answer in
  every mode.
- ``presence_penalty`` and ``frequency_penalty`` are sent when set (standard fields);
  ``extra_body`` is merged into every request (server-specific fields, such as llama.cpp's
  ``cache_prompt``).
- ``base_url`` may name several servers of one model (replicas): each has ``concurrency``
  slots, and a request takes whichever slot is free first, keeping it through its retries but
  for a refused connection: that replica then rests for the retry's backoff (its slots are
  not handed out) and the request goes at once, without spending a retry, to a free slot of
  a replica that is not resting, so a replica that is down costs time, not answers. (A
  timeout rests nothing: it may be one slow prompt.) An error of a server that could not be
  reached names that server.
- ``stop_loops``: answers are streamed and one caught in a loop (the same run of pieces
  back to back, :func:`curll.llm.loops.find_loop`; a server streams one piece per token)
  is cut off by closing the stream, which stops the server's work on it: the completion
  has ``finish_reason="loop"``, which the engine rejects and asks again like the
  transformers backend's loops.
- The API key is read from the environment variable ``api_key_env`` at construction and
  kept only in memory: never logged, never written. With the variable unset, requests carry
  the placeholder ``Bearer EMPTY`` (the client sends a key always; local servers ignore it); a
  server that wants a real one answers 401, a final error. Nothing else from the environment
  is sent: the client's own ``$OPENAI_ORG_ID``/``$OPENAI_PROJECT_ID`` headers are turned off.
  Servers echo keys in their errors ("Incorrect API key provided: sk-..."): every stored error
  (cut to its first 300 characters) has the key, any ``Authorization``/``Bearer`` value and
  any ``sk-`` token replaced by ``***`` (:func:`curll.llm.redact.redact`).
- ``model`` (the name on every output row and in every cache key) is ``<model>@<server>``,
  the server being ``base_url`` without credentials: the same model name on another server
  is another model, and its cached answers are not reused.
- A request that still fails (or returns a body that is not a valid completion) yields
  ``Completion(error=...)``, ``transient`` when the failure was one it retries (a server
  error, a rate limit, a timeout, a malformed body: it may pass later); it never raises. A
  server that cannot be reached at all is another matter: until the server has answered once
  (and again after a request lost its connection for good), a batch sends its first request
  alone, and when that one cannot connect after all its retries :meth:`OpenAIBackend.complete`
  raises a :class:`CurllError` naming the server and the params key its caller gives (``url_key``:
  ``llm.profiles.<name>.base_url`` for an ``openai`` profile; its ``timeout_s`` where the server
  took connections but sent no answer in time). A request has lost the server for good only
  when no request got an answer while it was retried (one slow prompt is its own timeout); a
  first request that timed out raises only when the server does not answer a request for its
  model list (``GET /models``) either: a prompt too slow for ``timeout_s`` on a server that
  answers is that request's error, asked again on the next run. Requests still
  queued when one lost its connection for good are not sent (``error`` says so; errors are
  never cached, so a rerun asks them). A dead server costs one request's retries (about 30 s),
  not every request's.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from hashlib import sha256
from typing import Any

from curll.config.llm import JsonMode
from curll.errors import CurllError
from curll.llm.identity import tagged
from curll.llm.openai_wire import (
    BACKOFF_S,
    SAID_CHARS,
    AttemptTimeoutError,
    describe,
    error_text,
    retry_after,
    stream_completion,
    whole_completion,
)
from curll.llm.protocol import OnAnswer
from curll.llm.redact import redact, server_of, without_key
from curll.llm.types import ChatRequest, Completion, canonical_json


class OpenAIBackend:
    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | Sequence[str],
        api_key_env: str | None = None,
        concurrency: int = 8,
        timeout_s: float = 120.0,
        max_retries: int = 6,
        backoff_s: float = BACKOFF_S,
        json_mode: JsonMode = "json_schema",
        extra_body: Mapping[str, Any] | None = None,
        stop_loops: bool = False,
        url_key: str = "base_url",
    ) -> None:
        self.url_key = url_key  # the params key an unreachable server's error names
        if concurrency < 1:
            raise CurllError("must be >= 1", field="concurrency")
        urls = [base_url] if isinstance(base_url, str) else list(base_url)
        if not urls:
            raise CurllError("needs at least one server", field=url_key)
        self._prefix = url_key.rpartition(".")[0]  # llm.profiles.<name>, or "" for a bare backend
        self.api_key_env = api_key_env
        # local servers accept any key; the variable unset means "send none"
        key = (os.environ.get(api_key_env) if api_key_env else None) or "EMPTY"
        if key != key.strip() or not key.isascii() or not key.isprintable():
            why = (
                "white space or a line end around it (a CRLF .env file?)"
                if key.isascii()
                else ("a character an HTTP header cannot carry")
            )
            raise CurllError(f"the key in ${api_key_env} has {why}", field=self._key("api_key_env"))
        self.served = model  # the name the server knows
        extra = sha256(canonical_json(dict(extra_body or {})).encode()).hexdigest()[:8]
        self.model = tagged(
            f"{model}@{server_of(urls[0])}",
            None if json_mode == "json_schema" else f"json-{json_mode}",  # how the schema binds the answer
            f"extra-{extra}" if extra_body else None,  # server-side fields: sampling, penalties, ...
            "stop-loops" if stop_loops else None,  # a loop is cut off, not run to max_tokens
        )
        self.base_urls = urls
        self.base_url = urls[0]
        self.concurrency = concurrency  # per server
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s  # the first retry's wait, doubling (retry_after)
        self.json_mode = json_mode
        self.extra_body = dict(extra_body or {})
        self.stop_loops = stop_loops
        self._api_key = key
        self._lost: str | None = None  # why a request could not connect, until one gets through
        self._lost_at = ""  # the server it could not connect to
        self._answered = False  # the server has answered at least once (any HTTP status)
        self._last_answer = float("-inf")  # when a request last got a completion (perf_counter)

    def __repr__(self) -> str:  # never show the key
        return (
            f"OpenAIBackend(model={self.served!r}, base_url={self._where()!r}, "
            f"concurrency={self.concurrency})"
        )

    def _where(self) -> str:
        return ", ".join(server_of(u) for u in self.base_urls)

    def _key(self, name: str) -> str:
        """The params key of this profile's ``name`` (the bare name for a backend built by hand)."""
        return f"{self._prefix}.{name}" if self._prefix else name

    def complete(
        self, requests: Sequence[ChatRequest], on_answer: OnAnswer | None = None
    ) -> list[Completion]:
        """One completion per request, in order; ``on_answer(i, completion)`` as each is final."""
        return asyncio.run(self._complete_all(requests, on_answer))

    async def _complete_all(
        self, requests: Sequence[ChatRequest], on_answer: OnAnswer | None
    ) -> list[Completion]:
        from openai import AsyncOpenAI, DefaultAsyncHttpxClient

        clients = [
            AsyncOpenAI(
                base_url=url,
                api_key=self._api_key,
                timeout=self.timeout_s,
                max_retries=0,  # retries are ours: see the module docstring
                # a redirect is the params' to fix (_config_error): followed, a 301 or 302 turns
                # the POST into a GET, which the server answers with an error per request
                http_client=DefaultAsyncHttpxClient(follow_redirects=False),
            )
            for url in self.base_urls
        ]
        for client in clients:  # the client would add $OPENAI_ORG_ID / $OPENAI_PROJECT_ID as headers
            client.organization = client.project = None  # to any server: only api_key_env is sent
        self._clients = clients
        self._down: dict[int, float] = {}  # id(client) -> until when its replica rests (loop time)
        slots: asyncio.Queue[Any] = asyncio.Queue()  # a free slot = the client of its server
        for _ in range(self.concurrency):
            for client in clients:
                slots.put_nowait(client)

        async def one(i: int, req: ChatRequest) -> Completion:
            done = await self._one(slots, req)
            if on_answer is not None:
                on_answer(i, done)
            return done

        tasks: list[asyncio.Task[Completion]] = []
        try:
            first: list[Completion] = []
            if requests and (self._lost is not None or not self._answered):
                self._lost = None
                first = [await one(0, requests[0])]  # alone: is anyone there?
                timed_out = self._lost is not None and self._lost.startswith(AttemptTimeoutError.__name__)
                if timed_out and await self._alive(clients[0]):
                    self._lost = None  # it answers: that prompt is slow (its own error), the server is there
                elif timed_out:
                    raise CurllError(
                        f"no answer from the server at {self._where()} within timeout_s = "
                        f"{self.timeout_s:g} s ({self.max_retries} retries): is it running, and is "
                        "timeout_s long enough for one answer?",
                        field=self._key("timeout_s"),
                    )
                if self._lost is not None:
                    among = f" (of {self._where()})" if len(self.base_urls) > 1 else ""
                    raise CurllError(
                        f"cannot reach the server at {self._lost_at}{among} "
                        f"({self.max_retries} retries): {self._lost}; is it running?",
                        field=self.url_key,
                    )
            tasks = [asyncio.create_task(one(i, r)) for i, r in enumerate(requests) if i >= len(first)]
            return first + list(await asyncio.gather(*tasks))
        finally:
            for task in tasks:  # only on an error (on_answer's): the others stop too
                task.cancel()
            for client in clients:
                await client.close()

    async def _alive(self, client: Any) -> bool:
        """Whether the server answers a request for its model list (any HTTP answer, an error
        status too) within ``timeout_s``: a server that answers is there, however slow a prompt."""
        import openai

        try:
            async with asyncio.timeout(self.timeout_s):
                await client.models.list()
        except openai.APIStatusError:
            return True
        except Exception:  # a connection refused or dropped, a timeout: nobody there
            return False
        return True

    def _config_error(self, exc: Exception) -> CurllError | None:
        """A refused key (401), a path or model the server does not have (404) or a redirect
        (3xx) is the params' fault, the same for every request: a CurllError naming the key to
        fix (raised by the caller outside its ``except``, so that the server's error, which may
        echo the key, is not chained to it), not a reject per request; None for any other error."""
        import openai

        if not isinstance(exc, openai.APIStatusError):
            return None
        status, where = exc.status_code, self._where()
        if 300 <= status < 400:
            to = redact(exc.response.headers.get("location", "?"), self._api_key)[:SAID_CHARS]
            return CurllError(f"the server at {where} redirects (HTTP {status} to {to}): set base_url to "
                              "where it points", field=self.url_key)  # fmt: skip
        if status not in (401, 404):
            return None  # 403 too may be one prompt's (a moderation refusal): that request's error
        said = redact(error_text(exc), self._api_key)[:SAID_CHARS]
        if status == 404 and "model" not in said.lower():
            return CurllError(f"the server at {where} has no chat completions there (HTTP 404: {said}): "
                              "base_url ends where the server's /chat/completions starts, often /v1",
                              field=self.url_key)  # fmt: skip
        if status == 404:
            return CurllError(f"the server at {where} does not serve the model {self.served!r} (HTTP 404: "
                              f"{said})", field=self._key("model"))  # fmt: skip
        if self.api_key_env is None:
            fix = "it wants a key: name the environment variable that holds it in api_key_env"
        else:
            fix = f"check ${self.api_key_env}" + ("" if os.environ.get(self.api_key_env) else ", unset")
        return CurllError(f"the server at {where} refused the key (HTTP {status}: {said}): {fix}",
                          field=self._key("api_key_env"))  # fmt: skip

    def _schema_kwargs(self, req: ChatRequest) -> dict[str, Any]:
        """The request fields that carry the schema in this ``json_mode``."""
        schema = req.schema
        if schema is None or self.json_mode == "none":
            return {}
        if self.json_mode == "json_object":
            return {"response_format": {"type": "json_object"}}
        if self.json_mode == "llamacpp":
            return {"response_format": {"type": "json_object", "schema": schema}}
        if self.json_mode == "vllm":
            return {"extra_body": {"structured_outputs": {"json": schema}}}
        return {"response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema,
                                                                             "strict": True}}}  # fmt: skip

    def request_kwargs(self, req: ChatRequest) -> dict[str, Any]:
        """Everything sent for ``req`` but the messages' transport: model, sampling, schema."""
        kwargs: dict[str, Any] = {
            "model": self.served,
            "messages": [{"role": m.role, "content": m.content} for m in req.messages],
            "temperature": req.sampling.temperature,
            "top_p": req.sampling.top_p,
            "max_tokens": req.sampling.max_tokens,
        }
        if req.sampling.seed is not None:
            kwargs["seed"] = req.sampling.seed
        kwargs.update(self._schema_kwargs(req))
        for name in ("presence_penalty", "frequency_penalty"):
            if getattr(req.sampling, name):
                kwargs[name] = getattr(req.sampling, name)
        if self.extra_body:
            kwargs["extra_body"] = {**kwargs.get("extra_body", {}), **self.extra_body}
        return kwargs

    async def _one(self, slots: asyncio.Queue[Any], req: ChatRequest) -> Completion:
        kwargs = self.request_kwargs(req)
        import openai

        client = await self._take(slots)
        try:
            start = time.perf_counter()
            if self._lost is not None:  # another request lost the server for good
                why = f"not sent: the server did not answer ({self._lost})"
                return Completion(text="", error=why, sent=False, transient=True)
            retry, tried = 0, set()  # tried: the replicas this retry has failed to connect to
            refused: CurllError | None = None
            while refused is None:
                try:
                    done = await self._attempt(client, kwargs)
                    done["text"] = without_key(done["text"], self._api_key)  # never stored, an echo neither
                    self._answered, self._lost = True, None
                    self._last_answer = time.perf_counter()
                    return Completion(**done, latency_s=time.perf_counter() - start)
                except Exception as exc:
                    if isinstance(exc, AttemptTimeoutError):
                        connected = exc.answered
                    else:  # the client's own APITimeoutError is an APIConnectionError
                        connected = not isinstance(exc, openai.APIConnectionError)
                    if connected:
                        self._answered, self._lost = True, None
                    refused = self._config_error(exc)
                    if refused is not None:
                        continue  # raised below, outside this except
                    wait = retry_after(exc, retry, self.backoff_s)
                    unreached = isinstance(exc, openai.APIConnectionError) and not isinstance(
                        exc, openai.APITimeoutError
                    )  # no connection at all; a timeout may be one slow answer, no reason to rest
                    if unreached and wait is not None and len(self.base_urls) > 1:
                        # a replica that took no connection rests for the wait, every slot of it;
                        # while another replica is not resting the retry goes there at once and
                        # costs no retry: the failure is the replica's, not the request's
                        self._down[id(client)] = asyncio.get_running_loop().time() + wait
                        tried.add(id(client))
                        if self._spare(tried):
                            resting, client = client, None  # given back once: by _rest's timer,
                            if not await self._rest(slots, resting):  # or here if its rest is over
                                slots.put_nowait(resting)
                            client = await self._take(slots)
                            continue
                    if wait is None or retry == self.max_retries:
                        error = redact(describe(exc), self._api_key)[:SAID_CHARS]
                        if not connected:
                            where = server_of(str(client.base_url))
                            if self._last_answer <= start:  # nobody got through since
                                self._lost, self._lost_at = error, where
                            error = f"{error} (at {where})"
                        return Completion(
                            text="",
                            latency_s=time.perf_counter() - start,
                            error=error,
                            transient=wait is not None,  # retried to the end: may pass
                        )
                    retry += 1
                    tried.clear()
                    await asyncio.sleep(wait)
            raise refused
        finally:
            if client is not None:
                slots.put_nowait(client)

    def _spare(self, tried: set[int]) -> bool:
        """Whether some replica this retry has not ``tried`` is not resting (:meth:`_rest`)."""
        now = asyncio.get_running_loop().time()
        return any(id(c) not in tried and self._down.get(id(c), 0.0) <= now for c in self._clients)

    async def _take(self, slots: asyncio.Queue[Any]) -> Any:
        """The next free slot whose replica is not resting (:meth:`_rest`)."""
        while True:
            client = await slots.get()
            if not await self._rest(slots, client):
                return client

    async def _rest(self, slots: asyncio.Queue[Any], client: Any) -> bool:
        """Whether ``client``'s replica rests (it took no connection a moment ago); if so, its
        slot goes back to ``slots`` when the rest ends."""
        loop = asyncio.get_running_loop()
        left = self._down.get(id(client), 0.0) - loop.time()
        if left <= 0:
            return False
        loop.call_later(left, slots.put_nowait, client)
        await asyncio.sleep(0)  # let the slots of other replicas reach their waiters first
        return True

    async def _attempt(self, client: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        """One HTTP request, cut off at ``timeout_s`` (:class:`AttemptTimeoutError`): cancelling it
        closes its connection, which stops the server's work on it."""
        heard: list[bool] = []  # gets an entry when the response headers come
        read = stream_completion if self.stop_loops else whole_completion
        ask = read(client, kwargs, heard)
        try:
            async with asyncio.timeout(self.timeout_s) as deadline:
                return await ask
        except TimeoutError:
            if not deadline.expired():
                raise  # not ours
            raise AttemptTimeoutError(self.timeout_s, answered=bool(heard)) from None
