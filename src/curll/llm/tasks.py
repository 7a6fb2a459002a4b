"""A task is a prompt plus the JSON schema its answer must satisfy (kept apart from backends).

:class:`TaskDef` is a task as the params describe it, one object defined beside the domain that
owns it (``curll.generate.tasks``, ``curll.templates``, ``curll.skill_graph.edges``,
``curll.split.units``, ``curll.evaluate.judge``): which prompt file, the schema of its answer for
a profile's ``max_chars``, and which profiles the params send it to. A stage turns it into a
:class:`Task` with :func:`curll.llm.factory.make_task`; the token-budget check
(``pipeline.tools.budget``) walks every domain's definitions with the same schemas, so the two
cannot drift, and this package imports no domain module.

:func:`ask` renders one request per row of fields, runs them through an
:class:`~curll.llm.engine.Engine`, and returns each request with its result;
:func:`provenance` turns a (request, result) into the columns every generated row keeps
(see :class:`curll.schemas.generation.Provenance`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curll.llm.engine import Check, Engine
from curll.llm.types import ChatRequest, Result, canonical_json
from curll.prompts import Prompt
from curll.sampling import Sampling

if TYPE_CHECKING:
    from curll.config import Params
    from curll.config.llm import MaxChars


@dataclass(frozen=True)
class Task:
    """A prompt, the schema of its answer, sampling, and optionally a ``check`` of a parsed
    answer whose failure the engine retries like a parse failure (see :mod:`curll.llm.engine`)."""

    prompt: Prompt
    schema: dict[str, Any]
    sampling: Sampling
    check: Check | None = None
    attempts: int | None = None  # overrides llm.attempts for this task

    def request(self, fields: Mapping[str, Any]) -> ChatRequest:
        return ChatRequest.build(
            self.prompt.render(**fields),
            sampling=self.sampling,
            schema=self.schema,
            prompt_version=self.prompt.version,
        )


@dataclass(frozen=True)
class TaskDef:
    """A task as the params describe it (see the module docstring).

    ``prompt(params)``: the prompt file; ``schema(params, caps)``: the answer's JSON schema under
    a profile's ``max_chars`` (every string and list bounded, so the budget check can measure its
    worst case); ``profiles(params)``: the profile names the params send it to (empty: not used).
    ``check``, when a task has one, is attached by the code that runs it (it needs run-time
    data, e.g. the rows an answer may quote)."""

    name: str
    prompt: Callable[[Params], str | Path]
    schema: Callable[[Params, MaxChars], dict[str, Any]]
    profiles: Callable[[Params], Sequence[str]]


def llm_use(params: Params) -> Sequence[str]:
    """``profiles`` of a task answered by ``llm.use``'s profile."""
    return (params.llm.use,)


@dataclass(frozen=True)
class Answer:
    request: ChatRequest
    result: Result

    @property
    def ok(self) -> bool:
        return self.result.status == "ok"


def ask(engine: Engine, task: Task, rows: Sequence[Mapping[str, Any]]) -> list[Answer]:
    """One answer per row, in order (rejects included; nothing raises for a bad answer)."""
    requests = [task.request(r) for r in rows]
    results = engine.run(requests, task.check, task.attempts, label=task.prompt.path.stem)
    return [Answer(q, a) for q, a in zip(requests, results, strict=True)]


def prompt_hash(request: ChatRequest) -> str:
    """16 hex chars identifying the rendered messages."""
    payload = canonical_json([asdict(m) for m in request.messages])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def provenance(answer: Answer, *, status: str | None = None, reason: str | None = None) -> dict[str, Any]:
    """The provenance columns; ``status``/``reason`` override the engine's (a semantic reject)."""
    req, res = answer.request, answer.result
    return {
        "request_key": res.key,
        "model": res.model,
        "backend": res.backend,
        "sampling": canonical_json(asdict(req.sampling)),
        "prompt_version": req.prompt_version,
        "prompt_hash": prompt_hash(req),
        "raw": res.text,
        "status": status or res.status,
        "reason": (reason if reason is not None else res.reason) or "",
        "attempts": res.attempts,
    }
