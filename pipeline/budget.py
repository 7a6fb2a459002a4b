"""The token-budget check of every LLM task the params send to a profile, before any stage runs.

The ``curll`` command runs :func:`check_budgets` after loading params. It walks every task
(prompt) the params send, with the schema its answers must follow, built by the domain module
that owns the task, and asks :mod:`curll.llm.budget` whether its largest answer closes inside
its profile's ``sampling.max_tokens``. It lives in the command layer so that :mod:`curll.llm`
imports no domain module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curll.config import Params, raise_problems
from curll.llm.budget import UnboundedSchemaError, max_chars, tokens_needed


def task_schemas(params: Params) -> dict[str, dict[str, dict[str, Any]]]:
    """{profile name: {task: schema}} for every task the params send to a profile."""
    from curll.evaluate.judge import judge_schema, rubric_schema
    from curll.generate.tasks import task_schema
    from curll.skill_graph.edges import edge_schema, weight_schema
    from curll.split.units import rating_schema
    from curll.templates import templates_schema

    gen = params.llm.profile
    caps = gen.max_chars
    pairs = {"cqa": params.generate.cqa_pairs, "csqa": params.generate.csqa_pairs}
    out: dict[str, dict[str, dict[str, Any]]] = {
        params.llm.use: {
            "templates": templates_schema(params.templates),
            **{t: task_schema(t, caps, n_pairs=pairs.get(t, 0)) for t in ("context", "ir", "cqa", "csqa")},
            "edge": edge_schema("0" * 16, "f" * 16, caps),
            "edge weight": weight_schema(caps),
        }
    }
    rater = params.rater  # split's rater: llm.use's profile unless split.rater names another
    out.setdefault(rater, {})["quality rating"] = rating_schema(params.llm.profiles[rater].max_chars)
    for judge in params.evaluate.judges:
        jcaps = params.llm.profiles[judge].max_chars
        tasks = out.setdefault(judge, {})
        tasks["judge rating"] = judge_schema(jcaps, explain=params.evaluate.explain)
        if params.evaluate.rubric.enabled:
            tasks["judge rubric"] = rubric_schema(jcaps)
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
