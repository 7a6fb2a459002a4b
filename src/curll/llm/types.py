"""Requests, raw completions and engine results: the data that crosses the LLM layer.

A :class:`ChatRequest` is content-addressed: :meth:`ChatRequest.key` hashes the model,
messages, sampling params, JSON schema, prompt version and attempt number, so the same
question to the same model is one cache entry, and a changed prompt or indicator is a
new one.

A schema keeps the key order its task wrote (:func:`ordered_json`): constrained decoding
emits properties in that order on every backend, so a model writes ``question`` before
``answer`` and ``rating`` before ``explanation``, as the prompts ask. Two schemas that
differ only in key order are different requests.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from curll.sampling import Role, Sampling


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """One chat request. ``schema_json`` is a compact JSON Schema string in the task's key order (or None)."""

    messages: tuple[Message, ...]
    sampling: Sampling = field(default_factory=Sampling)
    schema_json: str | None = None
    prompt_version: str = ""
    attempt: int = 0

    @staticmethod
    def build(
        messages: list[tuple[Role, str]],
        *,
        sampling: Sampling | None = None,
        schema: dict[str, Any] | None = None,
        prompt_version: str = "",
    ) -> ChatRequest:
        return ChatRequest(
            messages=tuple(Message(r, c) for r, c in messages),
            sampling=sampling or Sampling(),
            schema_json=None if schema is None else ordered_json(schema),
            prompt_version=prompt_version,
        )

    @property
    def schema(self) -> dict[str, Any] | None:
        return None if self.schema_json is None else dict(json.loads(self.schema_json))

    def retry(self, attempt: int) -> ChatRequest:
        """The same request as attempt ``attempt``; a fixed seed moves with it so a retry can differ."""
        seed = None if self.sampling.seed is None else self.sampling.seed + attempt
        return replace(self, attempt=attempt, sampling=replace(self.sampling, seed=seed))

    def key(self, model: str) -> str:
        payload = {"model": model, **asdict(self)}
        return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Completion:
    """What a backend returns for one request. ``error`` set means no usable answer; ``sent``
    False: the backend never sent it (its server was lost before its turn); ``transient``: the
    error may pass if asked again later (a server error, a rate limit, a timeout, a lost
    connection, a malformed body), not an answer of the model's."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str = ""
    error: str | None = None
    sent: bool = True
    transient: bool = False


@dataclass(frozen=True)
class Result:
    """The engine's answer to one request, kept on every generated row downstream.

    ``status`` is ``ok`` (``parsed`` holds the schema-valid object, or None without a
    schema) or ``reject`` (``reason`` says why: backend error, invalid JSON, schema
    violation, empty text). ``text`` is the raw output of the last attempt. ``transient``: the
    last attempt failed at the backend in a way that may pass (:class:`Completion`), so
    nothing of it is stored and a rerun asks it again.
    """

    key: str
    status: Literal["ok", "reject"]
    text: str
    parsed: Any
    reason: str | None
    attempts: int
    model: str
    backend: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool
    transient: bool = False


def ordered_json(obj: Any) -> str:
    """Compact JSON that keeps the key order of ``obj`` (a schema's property order is meaningful)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def canonical_json(obj: Any) -> str:
    """Key-sorted, compact JSON: equal objects give equal strings (and equal hashes)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
