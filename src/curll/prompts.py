"""Prompt templates: one Jinja2 file per task under ``prompts/``.

A prompt file defines two blocks, ``system`` and ``user``; :meth:`Prompt.render` fills
them with a row's fields and returns the chat messages. Undefined variables are errors
(``StrictUndefined``), so a renamed field fails loudly instead of rendering as empty.

``Prompt.version`` is a hash of the file's bytes. It is part of every request's cache
key, so editing a prompt re-asks exactly the requests rendered from it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from curll.errors import CurllError
from curll.llm.types import Role

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)
BLOCKS: tuple[Role, ...] = ("system", "user")


@dataclass(frozen=True)
class Prompt:
    path: Path
    version: str
    template: jinja2.Template

    def render(self, **fields: Any) -> list[tuple[Role, str]]:
        """``[("system", ...), ("user", ...)]`` for these fields; a missing field is a CurllError."""
        try:
            ctx = self.template.new_context(fields)
            return [(role, "".join(self.template.blocks[role](ctx)).strip()) for role in BLOCKS]
        except jinja2.UndefinedError as exc:
            raise CurllError(f"prompt needs a field the row lacks: {exc.message}", file=self.path) from None


def load_prompt(path: str | Path) -> Prompt:
    """Read and compile ``path``; it must define the ``system`` and ``user`` blocks."""
    p = Path(path)
    if not p.is_file():
        raise CurllError("prompt file not found", file=p)
    source = p.read_text(encoding="utf-8")
    try:
        template = _ENV.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise CurllError(f"template syntax error: {exc.message}", file=p, row=exc.lineno) from None
    missing = [b for b in BLOCKS if b not in template.blocks]
    if missing:
        raise CurllError(f"prompt must define blocks {list(BLOCKS)}; missing {missing}", file=p)
    return Prompt(p, hashlib.sha256(source.encode("utf-8")).hexdigest()[:16], template)
