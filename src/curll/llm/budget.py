"""Does the largest answer a schema allows fit in the profile's token budget?

Every task bounds its strings (``maxLength``) and lists (``maxItems``) so a model that
never stops still closes its JSON. That only works if the bounds fit in
``sampling.max_tokens``: a passage capped at 4,000 characters cannot be closed inside
1,024 tokens (~3.5 characters each), and such an answer ends as unterminated JSON, is
retried, and is rejected. :func:`check_budgets` checks every task a profile answers (the
``curll`` command runs it after loading params, before any stage), so the mistake is a
params error naming the profile's key instead of a run of rejects.

:func:`max_chars` is the length of the longest compact JSON text the schema admits
(every property present, every list full, every string at its cap, with the ``", "`` and
``": "`` separators xgrammar and most models write); an unbounded string, list or number
is an error, since its answer has no worst case.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curll.config import Params


class UnboundedSchemaError(ValueError):
    """A schema part with no size limit (a string without maxLength, a list without maxItems)."""


def max_chars(schema: dict[str, Any], path: str = "$") -> int:
    """Characters of the longest compact JSON value ``schema`` admits."""
    if "const" in schema:
        return len(json.dumps(schema["const"], ensure_ascii=False))
    if "enum" in schema:
        return max(len(json.dumps(v, ensure_ascii=False)) for v in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return max(max_chars(s, f"{path}/{key}[{i}]") for i, s in enumerate(schema[key]))
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        fields = [
            len(json.dumps(k, ensure_ascii=False)) + 2 + max_chars(v, f"{path}.{k}") for k, v in props.items()
        ]
        return 2 + sum(fields) + 2 * max(0, len(fields) - 1)
    if kind == "array":
        if "maxItems" not in schema:
            raise UnboundedSchemaError(f"{path}: a list without maxItems")
        n = int(schema["maxItems"])
        return 2 + n * max_chars(schema.get("items", {}), f"{path}[]") + 2 * max(0, n - 1)
    if kind == "string":
        if "maxLength" not in schema:
            raise UnboundedSchemaError(f"{path}: a string without maxLength")
        return 2 + int(schema["maxLength"])
    if kind in ("integer", "number"):
        if "minimum" in schema and "maximum" in schema:
            return max(len(str(schema["minimum"])), len(str(schema["maximum"])))
        raise UnboundedSchemaError(f"{path}: a number without minimum and maximum")
    if kind == "boolean":
        return 5
    if kind == "null":
        return 4
    raise UnboundedSchemaError(f"{path}: no type, const or enum")


def tokens_needed(chars: int, chars_per_token: float) -> int:
    """Tokens for an answer of ``chars`` characters, plus one for the end of the turn."""
    return math.ceil(chars / chars_per_token) + 1


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
    from curll.config import raise_problems

    raise_problems(budget_problems(params), source)
