"""The token-budget check of every LLM task the params send to a profile, before any stage runs.

The ``curll`` command runs :func:`check_budgets` after loading params. It walks
:func:`registry`, every domain's task definitions (:class:`curll.llm.tasks.TaskDef`, the
objects the stages make their tasks from), takes the schema of each for every profile the
params send it to, and asks :mod:`curll.llm.budget` whether its largest answer closes inside
that profile's ``sampling.max_tokens``. It lives in the command layer so that
:mod:`curll.llm` imports no domain module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curll.config import Params, raise_problems
from curll.llm.budget import UnboundedSchemaError, max_chars, tokens_needed
from curll.llm.tasks import TaskDef


def registry() -> list[TaskDef]:
    """Every LLM task of the pipeline, from the domain module that owns it."""
    from curll.evaluate.judge import RUBRIC, rating_tasks
    from curll.generate.tasks import tasks
    from curll.skill_graph.edges import EDGE, WEIGHT
    from curll.split.units import RATING
    from curll.templates import TASK

    return [TASK, *tasks().values(), EDGE, WEIGHT, RATING, *rating_tasks().values(), RUBRIC]


def task_schemas(params: Params) -> dict[str, dict[str, dict[str, Any]]]:
    """{profile name: {task: schema}} for every task the params send to a profile."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for task in registry():
        for name in task.profiles(params):
            out.setdefault(name, {})[task.name] = task.schema(params, params.llm.profiles[name].max_chars)
    return out


def budget_problems(params: Params) -> list[tuple[str, str]]:
    """(params key, message) for every task whose largest answer exceeds its profile's max_tokens."""
    problems = []
    for name, tasks in task_schemas(params).items():
        profile = params.llm.profiles[name]
        cpt, budget = float(profile.chars_per_token), profile.sampling.max_tokens
        for task, schema in tasks.items():
            key = f"llm.profiles.{name}.max_chars"
            try:
                chars = max_chars(schema)
            except UnboundedSchemaError as exc:
                problems.append((key, f"the {task} schema has no worst case: {exc}"))
                continue
            need = tokens_needed(chars, cpt)
            if need > budget:
                problems.append((key, (
                    f"the largest {task} answer is {chars:,} characters (~{need:,} tokens at {cpt:g} "
                    f"characters a token), more than sampling.max_tokens {budget:,}: lower max_chars "
                    f"(or the list sizes), or raise max_tokens"
                )))  # fmt: skip
    return problems


def check_budgets(params: Params, source: str | Path) -> None:
    """Raise a :class:`~curll.errors.CurllError` (file ``source``, the profile's key) when a task
    the params send to a profile cannot close its largest answer within its ``max_tokens``."""
    raise_problems(budget_problems(params), source)
