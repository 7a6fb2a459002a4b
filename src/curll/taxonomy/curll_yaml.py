"""Reader for curll's own YAML taxonomy layout (the built-in taxonomy uses it).

Layout: a top-level ``goals`` list; each item names its ``skill``, ``subskill`` and
``goal`` and maps stage numbers to lists of indicator sentences::

    goals:
      - skill: Mathematics
        subskill: Number
        goal: Counting and comparing quantities
        indicators:
          1: ["Counts objects up to 20 ...", ...]
          2: [...]

``source_row`` is the file's row where the goal's block starts, ``source_field``
``goals.<i>.indicators.<stage>`` (``i`` counted from 0). Failure behaviour: a top-level key
other than ``goals``, a missing or empty field, a non-integer stage or a non-string indicator
raises :class:`CurllError` naming the file, that row and the field (``goals.<i>.<key>``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from curll.errors import CurllError
from curll.schemas import MAX_STAGE
from curll.taxonomy.curll_csv import expand_inputs
from curll.taxonomy.model import IndicatorRecord, normalise
from curll.yamlio import item_rows, load_yaml


def _text(block: dict[str, Any], key: str) -> str:
    value = block.get(key)
    if not isinstance(value, str) or not normalise(value):
        raise CurllError("must be a non-empty string", field=key)
    return normalise(value)


def _goal(block: Any, p: Path, row: int, field_of: str) -> Iterator[IndicatorRecord]:
    """The indicators of the goal block starting on ``row``, whose fields are under ``field_of``
    (``goals.<i>``); a CurllError names the field within the block only."""
    if not isinstance(block, dict):
        raise CurllError("each goal must be a mapping")
    unknown = set(block) - {"skill", "subskill", "goal", "indicators"}
    if unknown:
        raise CurllError(f"unknown key(s) {sorted(unknown)}", field=sorted(unknown)[0])
    skill, subskill, goal = (_text(block, k) for k in ("skill", "subskill", "goal"))
    by_stage = block.get("indicators")
    if not isinstance(by_stage, dict) or not by_stage:
        raise CurllError("must map stage numbers to lists of indicators", field="indicators")
    for stage, items in by_stage.items():
        field = f"indicators.{stage}"
        if not isinstance(stage, int) or isinstance(stage, bool) or not 0 <= stage <= MAX_STAGE:
            quoted = f" (got the text {stage!r}: leave out the quotes)" if isinstance(stage, str) else ""
            raise CurllError(f"stage must be a whole number 0..{MAX_STAGE}{quoted}", field=field)
        if not isinstance(items, list) or not items:
            raise CurllError("must be a non-empty list of sentences", field=field)
        for item in items:
            if not isinstance(item, str) or not normalise(item):
                raise CurllError(f"indicator must be a non-empty string, got {item!r}", field=field)
            yield IndicatorRecord(
                stage, skill, subskill, goal, normalise(item), p.name, row, f"{field_of}.{field}", str(p)
            )


def read_curll_yaml(path: str | Path) -> Iterator[IndicatorRecord]:
    """Yield the indicators of one YAML taxonomy file, in file order."""
    p = Path(path)
    hint = "; a CSV is read with layout curll-csv or table" if p.suffix.lower() == ".csv" else ""
    try:
        data = load_yaml(p)
    except CurllError as exc:
        exc.message += hint
        raise
    if not isinstance(data, dict) or not isinstance(data.get("goals"), list) or not data["goals"]:
        raise CurllError(f"expected a non-empty top-level 'goals' list{hint}", file=p, field="goals")
    extra = sorted(str(k) for k in data if k != "goals")
    if extra:  # a misspelt second list ("goals2:") would otherwise be left out unread
        raise CurllError(
            f"unknown top-level key(s) {extra}: the layout has only 'goals'", file=p, field=extra[0]
        )
    rows = item_rows(p, "goals")
    for i, block in enumerate(data["goals"]):
        try:
            yield from _goal(block, p, rows[i], f"goals.{i}")
        except CurllError as exc:  # where: the file, the goal block's row, its field
            exc.file, exc.row = str(p), rows[i]
            exc.field = f"goals.{i}" + (f".{exc.field}" if exc.field else "")
            raise


def read_curll_yamls(paths: Sequence[str | Path]) -> Iterator[IndicatorRecord]:
    """Yield indicators from several YAML files (or folders of ``*.yaml``)."""
    for path in expand_inputs(paths, "*.yaml"):
        yield from read_curll_yaml(path)
