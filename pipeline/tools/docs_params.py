"""The params reference page, ``docs/params-reference.md``, generated from the typed params.

Every key of ``params.yaml`` with its type, default and description, one section a heading,
read from the pydantic models of ``src/curll/config/`` (their ``Field`` descriptions and
docstrings), so the page cannot drift from the code that validates the params:

    python -m pipeline.tools.docs_params            # rewrite docs/params-reference.md
    python -m pipeline.tools.docs_params --check    # exit 1 if the committed page is stale

``tests/test_docs_params.py`` fails while the committed page differs from :func:`render`.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from curll.config import Params
from curll.config.base import KeysOf, Registered

PAGE = Path("docs/params-reference.md")

HEADER = """\
# Params reference

Every key of `params.yaml`, one section per stage (plus `llm`, shared by the LLM stages): its
type, its default ("required": `params.yaml` must set it) and what it is for. An unknown key, a
wrong type or an out-of-range value stops the run naming the key ([Params and
errors](params.md)). A key written `<name>` is yours to choose (a profile, a model, a task).

This page is generated from the typed params in `src/curll/config/` by
`python -m pipeline.tools.docs_params`; do not edit it by hand. `tests/test_docs_params.py` fails while
it differs from what the generator writes.
"""

_SCALARS = {int: "int", float: "float", str: "str", bool: "bool", type(None): "null"}
_BOUNDS = (
    (annotated_types.Ge, "ge", ">="),
    (annotated_types.Gt, "gt", ">"),
    (annotated_types.Le, "le", "<="),
    (annotated_types.Lt, "lt", "<"),
)


def _constraints(metadata: list[Any]) -> list[str]:
    """Bounds, lengths and patterns of ``Annotated`` metadata, in words."""
    out: list[str] = []
    for item in metadata:
        for kind, attr, sign in _BOUNDS:
            if isinstance(item, kind):
                out.append(f"{sign} {getattr(item, attr)}")
        if isinstance(item, annotated_types.MinLen) and item.min_length > 0:
            out.append(f"length >= {item.min_length}")
        if isinstance(item, annotated_types.MaxLen):
            out.append(f"length <= {item.max_length}")
        pattern = getattr(item, "pattern", None)
        if isinstance(pattern, str):
            out.append(f"matches `{pattern}`")
        if isinstance(item, FieldInfo):
            out += _constraints(item.metadata)
    return out


def _is_section(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _union_args(tp: Any) -> tuple[Any, ...] | None:
    origin = get_origin(tp)
    return get_args(tp) if origin is Union or origin is types.UnionType else None


def _plain(tp: Any) -> Any:
    """``tp`` without its ``Annotated`` wrapper (``StrictFloat`` is ``float``)."""
    return get_args(tp)[0] if get_origin(tp) is Annotated else tp


def type_name(tp: Any, metadata: list[Any] | None = None, *, nested: bool = False) -> str:
    """A reader's name for a params type: ``int (>= 0)``, ``list of int``, ``one of a, b``."""
    if get_origin(tp) is Annotated:
        inner, *extra = get_args(tp)
        return type_name(inner, [*(metadata or []), *extra], nested=nested)
    constraints = _constraints(metadata or [])
    args = _union_args(tp)
    registry = next((m for m in metadata or [] if isinstance(m, Registered)), None)
    if registry is not None:
        return f"one of the registered {registry.what}s ({', '.join(registry.names())})"
    keyed = next((m for m in metadata or [] if isinstance(m, KeysOf)), None)
    if keyed is not None and get_origin(tp) is dict:
        value = type_name(get_args(tp)[1], nested=True)
        return f"map of every {keyed.what} ({', '.join(keyed.names())}) to {value}"
    if args is not None:
        if {_plain(a) for a in args} == {int, float}:
            name = "number"
        else:
            names = dict.fromkeys(type_name(a, nested=True) for a in args)
            name = " or ".join(names)
            name = f"({name})" if nested and len(names) > 1 else name
    elif get_origin(tp) is Literal:
        values = ", ".join(str(v) for v in get_args(tp))
        name = values if len(get_args(tp)) == 1 else f"one of {values}"
    elif get_origin(tp) in (tuple, list):
        name = f"list of {type_name(get_args(tp)[0], nested=True)}"
    elif get_origin(tp) is dict:
        key, value = get_args(tp)
        name = f"map of {type_name(key, nested=True)} to {type_name(value, nested=True)}"
    elif _is_section(tp):
        name = "section"
    else:
        name = _SCALARS.get(tp, getattr(tp, "__name__", str(tp)))
    return f"{name} ({', '.join(constraints)})" if constraints else name


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value: Any = field.default_factory()  # type: ignore[call-arg]
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return f"`{json.dumps(value, default=list)}`"


def _text(doc: str) -> str:
    """Docstring or description text as Markdown: ``x`` and :role:`x` become `x`, and <, > and |
    outside code become entities (no raw HTML, no broken table)."""
    doc = re.sub(r":\w+:`([^`]+)`", r"`\1`", doc.replace("``", "`"))
    parts = doc.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*")
    return "`".join(parts).replace("|", "\\|")


def _doc(model: type[BaseModel]) -> str:
    own = model.__dict__.get("__doc__")
    return _text(inspect.cleandoc(own)) if own else ""


def _variant(model: type[BaseModel]) -> str:
    """``backend: llamacpp``: the one-value literal that tells a union's sections apart."""
    for name, field in model.model_fields.items():
        args = get_args(field.annotation)
        if get_origin(field.annotation) is Literal and len(args) == 1:
            return f"{name}: {args[0]}"
    return model.__name__


def _sections(tp: Any, key: str) -> Iterator[tuple[str, type[BaseModel]]]:
    """The sections a field of type ``tp`` at ``key`` holds, each with its key: a section itself,
    an optional one, a map's values (key ``<name>``) and each kind of a union of sections."""
    if get_origin(tp) is Annotated:
        yield from _sections(get_args(tp)[0], key)
    elif _is_section(tp):
        yield key, tp
    elif (args := _union_args(tp)) is not None:
        for arg in args:
            yield from _sections(arg, key)
    elif get_origin(tp) is dict:
        yield from _sections(get_args(tp)[1], f"{key}.<name>")


def _table(model: type[BaseModel], key: str, title: str, done: set[tuple[str, str]]) -> Iterator[str]:
    """The table of one section at ``key``, then those of its sections (each key and kind once:
    the fields the kinds of a union share are written at its first kind)."""
    if (key, model.__qualname__) in done:
        return
    done.add((key, model.__qualname__))
    yield f"## `{key}`{title}" if "." not in key else f"### `{key}`{title}"
    yield ""
    if doc := _doc(model):
        yield doc
        yield ""
    yield "| key | type | default | description |"
    yield "|---|---|---|---|"
    nested: list[tuple[str, type[BaseModel]]] = []
    for name, field in model.model_fields.items():
        full = f"{key}.{name}"
        subs = list(_sections(field.annotation, full))
        nested += subs
        description = field.description or ""
        if not description and subs:
            first = _doc(subs[0][1]).split("\n\n")[0]
            description = " ".join(first.split()) if len(subs) == 1 else ""
        cell = type_name(field.annotation, list(field.metadata)).replace("|", "\\|")
        row = [f"`{full}`", cell, _default(field), _text(" ".join(description.split()))]
        yield "| " + " | ".join(row) + " |"
    yield ""
    kinds: dict[str, int] = {}
    for sub_key, _ in nested:
        kinds[sub_key] = kinds.get(sub_key, 0) + 1
    for sub_key, sub in nested:
        yield from _table(sub, sub_key, f" ({_variant(sub)})" if kinds[sub_key] > 1 else "", done)


def render() -> str:
    """The whole page, as :data:`PAGE` should hold it."""
    lines = [HEADER]
    done: set[tuple[str, str]] = set()
    for name, field in Params.model_fields.items():
        section = field.annotation
        assert isinstance(section, type) and issubclass(section, BaseModel), name
        lines += _table(section, name, "", done)
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    page = render()
    if argv == ["--check"]:
        stale = not PAGE.exists() or PAGE.read_text(encoding="utf-8") != page
        if stale:
            print(f"{PAGE} is stale: run python -m pipeline.tools.docs_params", file=sys.stderr)
        return int(stale)
    if argv:
        print("usage: python -m pipeline.tools.docs_params [--check]", file=sys.stderr)
        return 2
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
