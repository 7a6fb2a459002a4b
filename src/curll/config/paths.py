"""Where the params point: every output its own path, none of them an input.

:func:`path_problems` reads the loaded params: an output is a leaf under an ``out`` section
(``taxonomy.out.stats``), an input a ``<section>.input`` or a folder read as it is
(``split.imported.dir``, ``evaluate.checkpoints.dir``). Two outputs at one path would leave one
of them unwritten while its stage reports success (DVC, through ``dvc repro``, refuses it; a
stage run by hand does not), and an output at an input's path would overwrite what it reads.
Paths are compared as written, normalised (``a/./b`` is ``a/b``), not resolved on disk.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

#: inputs read as they are that a section names with another key than ``input``
INPUT_FOLDERS = ("split.imported.dir", "evaluate.checkpoints.dir")


def _leaves(model: BaseModel, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            yield from _leaves(value, f"{prefix}{name}.")
        else:
            yield prefix + name, value


def path_problems(params: BaseModel) -> list[tuple[str, str]]:
    """(params key, message) for each output at the path of an earlier output or of an input."""
    leaves = [(key, v) for key, v in _leaves(params) if isinstance(v, str)]
    inputs = {os.path.normpath(v): key for key, v in leaves if key.endswith(".input") or key in INPUT_FOLDERS}
    outputs: dict[str, str] = {}
    problems = []
    for key, value in leaves:
        if ".out." not in f".{key}":
            continue
        path = os.path.normpath(value)
        if path in outputs:
            problems.append((key, f"{value!r} is also {outputs[path]}: each output needs a path of its own"))
        elif path in inputs:
            problems.append((key, f"{value!r} is {inputs[path]}, an input: the output would overwrite it"))
        outputs.setdefault(path, key)
    return problems
