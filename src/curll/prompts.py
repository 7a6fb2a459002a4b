"""Prompt templates: one Jinja2 file per task under ``prompts/``.

A prompt file defines two blocks, ``system`` and ``user``; :meth:`Prompt.render` fills
them with a row's fields and returns the chat messages. Undefined variables are errors
(``StrictUndefined``), so a renamed field fails loudly instead of rendering as empty.

A prompt file is UTF-8 text: another encoding is a CurllError naming the file and line.
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
from curll.sampling import Role

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
    try:
        source = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise _not_utf8(p) from None
    try:
        template = _ENV.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise CurllError(f"template syntax error: {exc.message}", file=p, row=exc.lineno) from None
    missing = [b for b in BLOCKS if b not in template.blocks]
    if missing:
        raise CurllError(f"prompt must define blocks {list(BLOCKS)}; missing {missing}", file=p)
    return Prompt(p, hashlib.sha256(source.encode("utf-8")).hexdigest()[:16], template)


def _not_utf8(path: Path) -> CurllError:
    """The error for a prompt file that is not UTF-8, at the line of its first bad byte (found
    again in the whole file: the text reader's position is within a chunk)."""
    raw = path.read_bytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return CurllError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x}): save the prompt as UTF-8",
                          file=path, row=line)  # fmt: skip
    return CurllError("not UTF-8 text: save the prompt as UTF-8", file=path)  # it changed meanwhile
