"""Backend for any OpenAI-compatible chat server (vLLM, SGLang, TGI, llama.cpp, hosted APIs).

- Async requests through the official ``openai`` client with at most ``concurrency``
  in flight (an ``asyncio.Semaphore``).
- Retries are the client's own: exponential backoff with jitter on 408/409/429/5xx,
  connection errors and timeouts, honouring ``Retry-After``; ``max_retries`` and
  ``timeout_s`` come from params.
- With a schema, ``response_format`` asks the server for JSON-schema output
  (``json_mode="json_schema"``), plain JSON (``"json_object"``), or nothing (``"none"``)
  for servers without structured outputs; the engine validates the answer either way.
- The API key is read from the environment variable named by ``api_key_env`` at
  construction and kept only in memory: never logged, never written.
- A request that still fails after the client's retries (or returns a body that is not
  a valid completion) yields ``Completion(error=...)``; it never raises.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from typing import Any, Literal

from curll.errors import CurllError
from curll.llm.types import ChatRequest, Completion

JsonMode = Literal["json_schema", "json_object", "none"]


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
        key = "EMPTY"  # local servers accept any key
        if api_key_env:
            value = os.environ.get(api_key_env)
            if not value:
                raise CurllError(f"environment variable {api_key_env} is not set", field="api_key_env")
            key = value
        self.model = model
        self.base_url = base_url
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.json_mode = json_mode
        self._api_key = key

    def __repr__(self) -> str:  # never show the key
        return (
            f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r}, concurrency={self.concurrency})"
        )

    def complete(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        return asyncio.run(self._complete_all(requests))

    async def _complete_all(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        from openai import AsyncOpenAI

        client = AsyncOpenAI(
            base_url=self.base_url,
            api_key=self._api_key,
            timeout=self.timeout_s,
            max_retries=self.max_retries,
        )
        gate = asyncio.Semaphore(self.concurrency)
        try:
            return list(await asyncio.gather(*(self._one(client, gate, r) for r in requests)))
        finally:
            await client.close()

    def _response_format(self, req: ChatRequest) -> dict[str, Any] | None:
        if req.schema_json is None or self.json_mode == "none":
            return None
        if self.json_mode == "json_object":
            return {"type": "json_object"}
        return {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": req.schema, "strict": True},
        }

    async def _one(self, client: Any, gate: asyncio.Semaphore, req: ChatRequest) -> Completion:
        import openai

        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in req.messages],
            "temperature": req.sampling.temperature,
            "top_p": req.sampling.top_p,
            "max_tokens": req.sampling.max_tokens,
        }
        if req.sampling.seed is not None:
            kwargs["seed"] = req.sampling.seed
        fmt = self._response_format(req)
        if fmt is not None:
            kwargs["response_format"] = fmt
        async with gate:
            start = time.perf_counter()
            try:
                resp = await client.chat.completions.create(**kwargs)
                choice = resp.choices[0]
                text = choice.message.content or ""
            except (openai.OpenAIError, ValueError, AttributeError, IndexError, TypeError) as exc:
                # OpenAIError covers HTTP errors after retries and timeouts; the others are a
                # body that is not a completion (malformed JSON, missing fields)
                return Completion(
                    text="", latency_s=time.perf_counter() - start, error=f"{type(exc).__name__}: {exc}"
                )
            usage = resp.usage
            return Completion(
                text=text,
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                latency_s=time.perf_counter() - start,
                finish_reason=choice.finish_reason or "",
            )
