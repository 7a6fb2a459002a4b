"""Test doubles for unit tests: a scripted in-process backend (never shipped)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from curll.llm.engine import Engine
from curll.llm.types import ChatRequest, Completion

Answerer = Callable[[ChatRequest], Any]


class ScriptedBackend:
    """Answers each request with ``answer(request)``: a dict (sent as JSON) or a raw string."""

    name = "transformers"

    def __init__(self, answer: Answerer, model: str = "scripted") -> None:
        self.answer = answer
        self.model = model
        self.asked: list[ChatRequest] = []

    def complete(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        self.asked.extend(requests)
        out = []
        for r in requests:
            a = self.answer(r)
            out.append(Completion(text=a if isinstance(a, str) else json.dumps(a), completion_tokens=3))
        return out


def engine(answer: Answerer, attempts: int = 2) -> tuple[Engine, ScriptedBackend]:
    backend = ScriptedBackend(answer)
    return Engine(backend, None, attempts=attempts, progress=False), backend
