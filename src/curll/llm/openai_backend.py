"""Backend for any OpenAI-compatible chat server (vLLM, SGLang, TGI, llama.cpp, hosted APIs).

- Async requests through the official ``openai`` client with at most ``concurrency``
  in flight (an ``asyncio.Semaphore``).
- Retries are ours (the client's own are off), so an invalid request is never retried:
  connection errors, timeouts, 408, 409, 429 and 5xx are retried up to ``max_retries``
  times with exponential backoff and jitter, honouring ``Retry-After``; any other 4xx,
  and a 5xx whose message says the request itself is invalid or unsupported (llama.cpp
  answers an unknown ``response_format`` with HTTP 500), fails at once.
- ``json_mode`` says how a schema reaches the server: ``json_schema`` (OpenAI's
  ``response_format``), ``json_object`` (JSON mode, schema unenforced), ``llamacpp``
  (``{"type": "json_object", "schema": ...}``), ``vllm`` (``structured_outputs``), or
  ``none``. The schema keeps its task's key order. The engine validates the answer in
  every mode.
- ``presence_penalty`` and ``frequency_penalty`` are sent when set (standard fields).
- The API key is read from the environment variable ``api_key_env`` at construction and
  kept only in memory: never logged, never written. With the variable unset, requests go
  without a key (local servers need none); a server that wants one answers 401, a final
  error. Servers echo keys in their errors ("Incorrect API key provided: sk-..."): every
  stored error has the key, any ``Authorization``/``Bearer`` value and any ``sk-`` token
  replaced by ``***`` (:func:`redact`).
- ``model`` (the name on every output row and in every cache key) is ``<model>@<server>``,
  the server being ``base_url`` without credentials: the same model name on another server
  is another model, and its cached answers are not reused.
- A request that still fails (or returns a body that is not a valid completion) yields
  ``Completion(error=...)``; it never raises. A server that cannot be reached at all is
  another matter: until the server has answered once (and again after a request lost its
  connection for good), a batch sends its first request alone, and when that one cannot
  connect after all its retries :meth:`OpenAIBackend.complete` raises a :class:`CurllError`
  naming the server and ``llm.base_url``. Requests still queued when one lost its
  connection for good are not sent (``error`` says so; errors are never cached, so a rerun
  asks them). A dead server costs one request's retries (about 30 s), not every request's.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import time
from collections.abc import Sequence
from typing import Any, Literal

from curll.errors import CurllError
from curll.llm.types import ChatRequest, Completion

JsonMode = Literal["json_schema", "json_object", "llamacpp", "vllm", "none"]
RETRY_STATUS = frozenset({408, 409, 429})
#: a server error whose message blames the request is final, not transient
INVALID = re.compile(
    r"invalid[ _]request|not supported|unsupported|does not support|must be one of|unknown (field|parameter)",
    re.IGNORECASE,
)
BACKOFF_S, BACKOFF_MAX_S = 0.5, 30.0


class OpenAIBackend:
    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key_env: str | None = None,
        concurrency: int = 8,
        timeout_s: float = 120.0,
        max_retries: int = 6,
        json_mode: JsonMode = "json_schema",
    ) -> None:
        if concurrency < 1:
            raise CurllError("must be >= 1", field="concurrency")
        # local servers accept any key; the variable unset means "send none"
        key = (os.environ.get(api_key_env) if api_key_env else None) or "EMPTY"
        self.served = model  # the name the server knows
        self.model = f"{model}@{server_of(base_url)}"
        self.base_url = base_url
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.json_mode = json_mode
        self._api_key = key
        self._lost: str | None = None  # why a request could not connect, until one gets through
        self._answered = False  # the server has answered at least once (any HTTP status)

    def __repr__(self) -> str:  # never show the key
        return (
            f"OpenAIBackend(model={self.served!r}, base_url={server_of(self.base_url)!r}, "
            f"concurrency={self.concurrency})"
        )

    def complete(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        return asyncio.run(self._complete_all(requests))

    async def _complete_all(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        from openai import AsyncOpenAI

        client = AsyncOpenAI(
            base_url=self.base_url,
            api_key=self._api_key,
            timeout=self.timeout_s,
            max_retries=0,  # retries are ours: see the module docstring
        )
        gate = asyncio.Semaphore(self.concurrency)
        try:
            first: list[Completion] = []
            if requests and (self._lost is not None or not self._answered):
                self._lost = None
                first = [await self._one(client, gate, requests[0])]  # alone: is anyone there?
                if self._lost is not None:
                    raise CurllError(
                        f"cannot reach the server at {server_of(self.base_url)} "
                        f"({self.max_retries} retries): {self._lost}; is it running?",
                        field="llm.base_url",
                    )
            rest = requests[len(first) :]
            return first + list(await asyncio.gather(*(self._one(client, gate, r) for r in rest)))
        finally:
            await client.close()

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
        return kwargs

    async def _one(self, client: Any, gate: asyncio.Semaphore, req: ChatRequest) -> Completion:
        kwargs = self.request_kwargs(req)
        import openai

        async with gate:
            start = time.perf_counter()
            if self._lost is not None:  # another request lost the server for good
                return Completion(text="", error=f"not sent: the server did not answer ({self._lost})")
            for retry in range(self.max_retries + 1):
                try:
                    resp = await client.chat.completions.create(**kwargs)
                    self._answered, self._lost = True, None
                    choice = resp.choices[0]
                    text = choice.message.content or ""
                    break
                except Exception as exc:
                    connected = not isinstance(exc, openai.APIConnectionError)  # (timeouts included)
                    if connected:
                        self._answered, self._lost = True, None
                    wait = _retry_after(exc, retry)
                    if wait is None or retry == self.max_retries:
                        error = redact(_describe(exc), self._api_key)
                        if not connected:
                            self._lost = error
                        return Completion(text="", latency_s=time.perf_counter() - start, error=error)
                    await asyncio.sleep(wait)
            usage = resp.usage
            return Completion(
                text=text,
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                latency_s=time.perf_counter() - start,
                finish_reason=choice.finish_reason or "",
            )


#: secrets a server may echo in an error: bearer tokens, Authorization values, OpenAI-style keys
_SECRETS = re.compile(
    r"(?i)((?:authorization[\"']?\s*[:=]\s*[\"']?)?(?:bearer|basic|token)\s+|authorization[\"']?\s*[:=]\s*[\"']?)"
    r"[^\s\"',}]+|\bsk-[A-Za-z0-9_\-*]{6,}"
)


def redact(text: str, key: str | None = None) -> str:
    """``text`` with ``key`` (when it is a real one) and any token that looks like a secret
    replaced by ``***``."""
    if key and key != "EMPTY" and len(key) >= 4:
        text = text.replace(key, "***")
    return _SECRETS.sub(lambda m: (m.group(1) or "") + "***", text)


def server_of(base_url: str) -> str:
    """``base_url`` without user and password (``http://u:p@host:8000/v1`` -> ``http://host:8000/v1``)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(base_url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def _retry_after(exc: Exception, retry: int) -> float | None:
    """Seconds to wait before retrying after ``exc``, or None when it is final."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status not in RETRY_STATUS and status < 500:
            return None  # the request itself is wrong (400, 401, 403, 404, 422...)
        if status >= 500 and INVALID.search(str(exc)):
            return None  # a server that reports an invalid request as a 5xx
        headers = exc.response.headers
        for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
            try:
                return min(float(headers[name]) * scale, 60.0)
            except (KeyError, ValueError):
                continue
    elif not isinstance(exc, (openai.OpenAIError, ValueError, AttributeError, IndexError, TypeError)):
        raise exc  # a bug, not a server's answer
    # connection errors and timeouts; a body that is not a completion (malformed JSON,
    # missing fields), as a server mid-restart may send
    return float(min(BACKOFF_S * 2**retry, BACKOFF_MAX_S) * (0.5 + random.random() / 2))
