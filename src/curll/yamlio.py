"""YAML read as DVC reads it: YAML 1.2 by ruamel.yaml's safe loader (``010`` is 10, ``yes`` and
``off`` are text, ``0o10`` is 8), and a mapping that repeats a key is an error, not "last one wins".

:func:`load_yaml` raises :class:`~curll.errors.CurllError` naming the file, the key (dotted
from the root, list items by index) and the rows of both occurrences; an anchor used inside
itself (``a: &x [*x]``: a value that holds itself) names the file; other YAML errors name the
file and row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curll.errors import CurllError, one_line

_MERGE = "tag:yaml.org,2002:merge"  # "<<:" merges another mapping: not a repeated key


def _reader() -> Any:
    """The loader DVC's ``parse_yaml`` uses (``YAML(typ="safe")``)."""
    from ruamel.yaml import YAML

    return YAML(typ="safe")


def _loaded(key: Any, constructor: Any) -> Any:
    """A mapping key as the loader makes it, so 1 and 01 (or 1 and 1.0, true and True) are one
    key; a key it cannot make into a dict key (``!!seq x``, an unknown tag) is its tag and text:
    loading then fails on it with YAML's own error."""
    from ruamel.yaml.error import YAMLError

    try:
        made = constructor.construct_object(key, deep=True)
        hash(made)
    except (YAMLError, TypeError, ValueError):
        return (key.tag, key.value)
    return made


class SelfHoldingError(ValueError):
    """A composed node that holds itself (an anchor used inside itself); ``args[0]``: its row."""


def duplicate_key(
    node: Any, constructor: Any, path: tuple[str, ...] = (), inside: frozenset[int] = frozenset()
) -> tuple[str, int, int] | None:
    """(dotted key, first row, second row) of the first key repeated in a mapping of the
    composed ``node``, or None. Keys are compared as loaded, not as written. A node met again
    inside itself (``inside``: the ids of the nodes above) is a :class:`SelfHoldingError`."""
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    if id(node) in inside:
        raise SelfHoldingError(node.start_mark.line + 1)
    inside |= {id(node)}
    if isinstance(node, MappingNode):
        seen: dict[Any, int] = {}
        for key, value in node.value:
            name = str(key.value) if isinstance(key, ScalarNode) else "?"
            if isinstance(key, ScalarNode) and key.tag != _MERGE:
                row = key.start_mark.line + 1
                as_loaded = _loaded(key, constructor)
                if as_loaded in seen:
                    return ".".join((*path, name)), seen[as_loaded], row
                seen[as_loaded] = row
            found = duplicate_key(value, constructor, (*path, name), inside)
            if found:
                return found
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            found = duplicate_key(item, constructor, (*path, str(i)), inside)
            if found:
                return found
    return None


def load_yaml(path: str | Path) -> Any:
    """The YAML document in ``path`` (safe types only); a repeated key, an anchor used inside
    itself, invalid YAML or text that is not UTF-8 is a CurllError naming the file."""
    from ruamel.yaml.error import YAMLError

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:  # the row of the first bad byte, as the CSV reader names it
        row = p.read_bytes()[: exc.start].count(b"\n") + 1
        raise CurllError(f"not valid UTF-8 (byte 0x{exc.object[exc.start]:02x})", file=p, row=row) from None
    reader = _reader()
    try:
        node = reader.compose(text)
        repeated = duplicate_key(node, reader.constructor)
        data = None if repeated else _reader().load(text)  # as DVC loads it (its C parser where built)
    except SelfHoldingError as exc:
        raise CurllError("an anchor is used inside itself (&name ... *name): the value would hold itself",
                         file=p, row=exc.args[0]) from None  # fmt: skip
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        said = getattr(exc, "problem", None) or str(exc).splitlines()[0]  # its first line: no excerpt
        context = getattr(exc, "context", None)
        where = f" ({context})" if context else ""
        raise CurllError(
            f"invalid YAML: {said}{where}", file=p, row=mark.line + 1 if mark else None
        ) from None
    except (ValueError, TypeError, OverflowError) as exc:  # a value no type holds: 2024-02-30, !!int 1.5
        raise CurllError(f"invalid YAML: {one_line(exc, 200)}", file=p) from None
    if repeated:
        key, first, second = repeated
        raise CurllError(f"duplicate key {key!r} (rows {first} and {second})", file=p, row=second, field=key)
    return data


def item_rows(path: str | Path, key: str) -> list[int]:
    """The row on which each item of the top-level list ``key`` of a YAML file starts (for an
    error in a file :func:`load_yaml` read); empty where the file has no such list."""
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    node = _reader().compose(Path(path).read_text(encoding="utf-8"))
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if k.value == key and isinstance(v, SequenceNode):
                return [item.start_mark.line + 1 for item in v.value]
    return []


def dump_yaml(data: Any, path: str | Path) -> None:
    """``data`` written to ``path`` as YAML that :func:`load_yaml`, and DVC, read back as the same
    values (YAML 1.2: the text ``1e3`` or ``yes`` is quoted), in block style, keys in order."""
    from ruamel.yaml import YAML

    writer = YAML(typ="safe")
    writer.default_flow_style = False
    writer.sort_base_mapping_type_on_output = False  # type: ignore[assignment]  # typed None, read as a flag
    with Path(path).open("w", encoding="utf-8") as f:
        writer.dump(data, f)
