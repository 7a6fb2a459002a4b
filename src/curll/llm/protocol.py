"""The one interface every LLM backend implements.

A backend is a plain class with ``name``, ``model`` and :meth:`Backend.complete`. It
must return one :class:`Completion` per request, in order, and must not raise for a
failure of a single request: it returns ``Completion(text="", error=...)`` instead, so
one bad request never loses a batch. Caching, JSON parsing, schema validation and
retry attempts live in :class:`curll.llm.engine.Engine`, not in backends. A backend that
holds something to release (the llamacpp backend's servers) also has ``close()``, which
the engine calls when it is closed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from curll.llm.types import ChatRequest, Completion


@runtime_checkable
class Backend(Protocol):
    name: str
    model: str

    def complete(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        """Answer ``requests`` (a batch); one Completion each, same order."""
        ...
