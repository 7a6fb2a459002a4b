"""YAML read as DVC reads it: a mapping that repeats a key is an error, not "last one wins".

:func:`load_yaml` raises :class:`~curll.errors.CurllError` naming the file, the key (dotted
from the root, list items by index) and the rows of both occurrences; other YAML errors name
the file and row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from curll.errors import CurllError

_MERGE = "tag:yaml.org,2002:merge"  # "<<:" merges another mapping: not a repeated key
_VALUE = "tag:yaml.org,2002:value"  # "=": a key the safe loader reads as a string


def _loaded(key: ScalarNode) -> Any:
    """A mapping key as the safe loader makes it, so 1 and 01 (or 1 and 1.0, true and 1) are one
    key; a key it cannot make into a dict key (``!!seq x``, an unknown tag) is its tag and text:
    loading then fails on it with YAML's own error."""
    if key.tag == _VALUE:  # "=": the loader reads it as the plain string
        return key.value
    try:
        made = yaml.constructor.SafeConstructor().construct_object(key)
        hash(made)
    except (yaml.YAMLError, TypeError):
        return (key.tag, key.value)
    return made


def duplicate_key(node: Node | None, path: tuple[str, ...] = ()) -> tuple[str, int, int] | None:
    """(dotted key, first row, second row) of the first key repeated in a mapping, or None. Keys
    are compared as loaded, not as written: ``1`` and ``01`` repeat one key."""
    if isinstance(node, MappingNode):
        seen: dict[Any, int] = {}
        for key, value in node.value:
            name = str(key.value) if isinstance(key, ScalarNode) else "?"
            if isinstance(key, ScalarNode) and key.tag != _MERGE:
                row = key.start_mark.line + 1
                as_loaded = _loaded(key)
                if as_loaded in seen:
                    return ".".join((*path, name)), seen[as_loaded], row
                seen[as_loaded] = row
            found = duplicate_key(value, (*path, name))
            if found:
                return found
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            found = duplicate_key(item, (*path, str(i)))
            if found:
                return found
    return None


def load_yaml(path: str | Path) -> Any:
    """The YAML document in ``path`` (safe types only); a repeated key, invalid YAML or text
    that is not UTF-8 is a CurllError naming the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CurllError("not valid UTF-8", file=p) from None
    try:
        repeated = duplicate_key(yaml.compose(text, Loader=yaml.SafeLoader))
        if repeated:
            key, first, second = repeated
            raise CurllError(
                f"duplicate key {key!r} (rows {first} and {second})", file=p, row=second, field=key
            )
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        said = getattr(exc, "problem", None) or str(exc).splitlines()[0]  # its first line: no excerpt
        context = getattr(exc, "context", None)
        where = f" ({context})" if context else ""
        raise CurllError(
            f"invalid YAML: {said}{where}", file=p, row=mark.line + 1 if mark else None
        ) from None
