"""Where the params point: every output its own path, none inside another, none an input.

:func:`path_problems` reads the loaded params: an output is a leaf under an ``out`` section
(``taxonomy.out.stats``); an input is a ``<section>.input``, a prompt template (``*.prompt``,
``*.prompts.*``), a folder read as it is (:data:`READ_AS_IS`) or the LLM cache. Two outputs at
one path would leave one of them unwritten while its stage reports success, an output inside
another's folder is refused by DVC (overlapping outputs) only once ``dvc repro`` runs, and an
output at an input's path would overwrite what it reads. Paths are compared as written,
normalised (``a/./b`` is ``a/b``), not resolved on disk.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

#: paths read as they are that a section names with another key than ``input``
READ_AS_IS = ("split.imported.dir", "evaluate.checkpoints.dir", "llm.cache")


def _leaves(model: BaseModel, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            yield from _leaves(value, f"{prefix}{name}.")
        else:
            yield prefix + name, value


def _is_input(key: str) -> bool:
    last = key.rsplit(".", 1)[-1]
    return last in ("input", "prompt") or ".prompts." in key or key in READ_AS_IS


def path_problems(params: BaseModel) -> list[tuple[str, str]]:
    """(params key, message) for each output at the path of an earlier output or of an input,
    or inside (or around) another output's folder."""
    leaves = [(key, v) for key, v in _leaves(params) if isinstance(v, str)]
    inputs = {os.path.normpath(v): key for key, v in leaves if _is_input(key)}
    outputs: dict[str, str] = {}
    problems = []
    for key, value in leaves:
        if ".out." not in f".{key}":
            continue
        path = os.path.normpath(value)
        around = [k for p, k in outputs.items() if path.startswith(p + os.sep) or p.startswith(path + os.sep)]
        if path in outputs:
            problems.append((key, f"{value!r} is also {outputs[path]}: each output needs a path of its own"))
        elif around:
            problems.append((key, f"{value!r} overlaps {around[0]}: one output inside another's folder "
                                  "(DVC refuses overlapping outputs)"))  # fmt: skip
        elif path in inputs:
            problems.append((key, f"{value!r} is {inputs[path]}, an input: the output would overwrite it"))
        outputs.setdefault(path, key)
    return problems
