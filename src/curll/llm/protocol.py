"""The one interface every LLM backend implements.

A backend is a plain class with ``name``, ``model`` and :meth:`Backend.complete`. It
must return one :class:`Completion` per request, in order, and must not raise for a
failure of a single request: it returns ``Completion(text="", error=...)`` instead, so
one bad request never loses a batch. Caching, JSON parsing, schema validation and
retry attempts live in :class:`curll.llm.engine.Engine`, not in backends. A backend that
holds something to release (the llamacpp backend's servers) also has ``close()``, which
the engine calls when it is closed.

A backend that gets its answers one by one may also take ``on_answer``
(:class:`AnswersAsTheyCome`, told apart by :func:`takes_on_answer`): it calls
``on_answer(index, completion)`` once per request, as soon as that request's answer is
final (its retries done), from the thread that called ``complete``, and still returns
every answer. The engine stores each answer as it comes, so a killed run loses only the
requests in flight; an exception raised by ``on_answer`` propagates out of ``complete``.
A backend without the parameter keeps working: its answers are stored per batch.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from curll.llm.types import ChatRequest, Completion

#: called by a backend with (index of the request in the batch, its final completion)
OnAnswer = Callable[[int, Completion], None]


@runtime_checkable
class Backend(Protocol):
    name: str
    model: str

    def complete(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        """Answer ``requests`` (a batch); one Completion each, same order."""
        ...


class AnswersAsTheyCome(Backend, Protocol):
    def complete(
        self, requests: Sequence[ChatRequest], on_answer: OnAnswer | None = None
    ) -> list[Completion]:
        """As :meth:`Backend.complete`, calling ``on_answer(i, completion)`` as each answer is final."""
        ...


def takes_on_answer(backend: object) -> bool:
    """Whether ``backend.complete`` has an ``on_answer`` parameter (see the module docstring)."""
    complete = getattr(backend, "complete", None)
    if not callable(complete):
        return False
    try:
        return "on_answer" in inspect.signature(complete).parameters
    except (TypeError, ValueError):  # a callable without a signature (some builtins)
        return False
