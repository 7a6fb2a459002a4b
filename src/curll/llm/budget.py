"""Does the largest answer a schema allows fit in the profile's token budget?

Every task bounds its strings (``maxLength``) and lists (``maxItems``) so a model that
never stops still closes its JSON. That only works if the bounds fit in
``sampling.max_tokens``: a passage capped at 4,000 characters cannot be closed inside
1,024 tokens (~3.5 characters each), and such an answer ends as unterminated JSON, is
retried, and is rejected. ``pipeline.tools.budget.check_budgets`` checks every task a profile
answers (the ``curll`` command runs it after loading params, before any stage), so the
mistake is a params error naming the profile's key instead of a run of rejects; this module
only measures schemas, and knows no task.

:func:`max_chars` is the length of the longest compact JSON text the schema admits
(every property present, every list full, every string at its cap, with the ``", "`` and
``": "`` separators xgrammar and most models write); an unbounded string, list or number
is an error, since its answer has no worst case.
"""

from __future__ import annotations

import json
import math
from typing import Any


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
