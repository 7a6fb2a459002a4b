"""Importer for the CurLL authors' taxonomy CSV layout.

Layout (one file per age range, e.g. ``age_0_5.csv`` and ``age_5_11.csv``)::

    <index>, Skills, Sub-skills, Goals, stage-1, stage-2, ...

- The hierarchy columns are written once and left empty below: they are forward-filled,
  and a new value at a level clears the levels beneath it (a new skill starts with no
  sub-skill until one is given).
- Each non-empty stage cell is one indicator of that stage. Indicator cells are never
  forward-filled: an empty cell means "no indicator here".
- Header variants are accepted: ``Skill``/``Skills``, ``Sub-skill(s)``/``Subskill(s)``,
  ``Goal``/``Goals``, ``stage-k``/``Stage-k``/``Stage k``; other columns are ignored.
- Cells are stripped and inner white space is folded; a placeholder (``N/A``, ``#N/A``, ``-``)
  in a stage column is no indicator, and in a hierarchy column means none (``walk_rows``).

Failure behaviour: missing hierarchy or stage columns, a negative stage (``stage -1``,
``stage--1``; ``stage - 1`` is stage 1), a header that starts with ``stage`` but gives no
stage number (``Stage 3 (revised)``), a stage column with no
indicator, an indicator with no skill/sub-skill/goal above it, and duplicate
indicators raise :class:`CurllError` with the file, spreadsheet row and column.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from fnmatch import fnmatch
from pathlib import Path

from curll.csvio import CsvTable, read_csv
from curll.errors import CurllError
from curll.schemas import MAX_STAGE
from curll.taxonomy.model import IndicatorRecord, cell_text, normalise

_LEVELS = ("skill", "subskill", "goal")
_LEVEL_NAMES = {"skill": "Skills", "subskill": "Sub-skills", "goal": "Goals"}
_STAGE_RE = re.compile(r"^stage[\s_-]*([0-9]+)$")  # ASCII digits: \d matches any script's
# a minus sign rather than a joiner: "stage -1", "stage--1", "stage_-1" (not "stage-1", "stage - 1")
_NEGATIVE_STAGE_RE = re.compile(r"^stage[\s_-]+-[0-9]+$")


def _header_key(cell: str) -> str | None:
    """Map a header cell to 'skill' / 'subskill' / 'goal' / 'stage:N', or None."""
    key = normalise(cell).lower()
    m = _STAGE_RE.match(key)
    if m:
        return f"stage:{int(m.group(1))}"
    compact = re.sub(r"[\s_-]", "", key)
    return {
        "skill": "skill",
        "skills": "skill",
        "subskill": "subskill",
        "subskills": "subskill",
        "goal": "goal",
        "goals": "goal",
    }.get(compact)


def _columns(table: CsvTable) -> tuple[dict[str, int], dict[int, int]]:
    levels: dict[str, int] = {}
    stages: dict[int, int] = {}
    for idx, cell in enumerate(table.header):
        if _NEGATIVE_STAGE_RE.match(normalise(cell).lower()):
            raise CurllError("a stage cannot be negative (stages count from 0)",
                             file=table.path, row=1, field=cell.strip())  # fmt: skip
        key = _header_key(cell)
        if key is None:
            if normalise(cell).lower().startswith("stage"):  # a stage whose number cannot be read
                raise CurllError("a header that starts with 'stage' must read 'stage-k' (k the stage's "
                                 "number); rename the column if it holds no stage",
                                 file=table.path, row=1, field=cell.strip())  # fmt: skip
            continue
        if key.startswith("stage:"):
            stage = int(key.split(":")[1])
            if stage > MAX_STAGE:
                raise CurllError(f"stage {stage} is above {MAX_STAGE}, the last stage curll has",
                                 file=table.path, row=1, field=cell.strip())  # fmt: skip
            if stage in stages:
                raise CurllError(f"stage {stage} appears in two columns", file=table.path, row=1, field=cell)
            stages[stage] = idx
        elif key in levels:
            raise CurllError(f"two columns mean {_LEVEL_NAMES[key]!r}", file=table.path, row=1, field=cell)
        else:
            levels[key] = idx
    missing = [_LEVEL_NAMES[lv] for lv in _LEVELS if lv not in levels]
    if missing:
        raise CurllError(
            f"missing column(s) {missing}; expected Skills, Sub-skills, Goals and stage-k columns",
            file=table.path,
            row=1,
            field=missing[0],
        )
    if not stages:
        raise CurllError("no stage columns (expected headers like 'stage-1')", file=table.path, row=1)
    return levels, stages


def read_curll_csv(path: str | Path) -> Iterator[IndicatorRecord]:
    """Yield the indicators of one CurLL-layout CSV file, in file order."""
    table = read_csv(path)
    levels, stages = _columns(table)
    found = dict.fromkeys(stages, 0)

    def cells_of(_: int, row: list[str]) -> Iterator[tuple[int, int]]:
        return ((stage, col) for stage, col in stages.items() if cell_text(row[col]))

    for rec in walk_rows(table, levels, cells_of):
        found[rec.stage] += 1
        yield rec
    for stage, count in found.items():
        if count == 0:
            raise CurllError(
                f"stage {stage} column has no indicators",
                file=table.path,
                field=table.header[stages[stage]].strip(),
            )


def walk_rows(
    table: CsvTable, levels: dict[str, int], cells_of: Callable[[int, list[str]], Iterable[tuple[int, int]]]
) -> Iterator[IndicatorRecord]:
    """The indicators of ``table`` in file order, the hierarchy filled down.

    ``levels`` maps ``skill``, ``goal`` and optionally ``subskill`` to column indices (a table
    with no sub-skill column gives each indicator its skill as sub-skill); ``cells_of(row_no, cells)``
    names the non-empty indicator cells of that spreadsheet row as ``(stage, column)``. A hierarchy cell left
    empty repeats the value above it, and so does the value in force written again (a file filled
    down in part); a new value at a level clears the levels beneath it. A
    placeholder (``N/A``) is "none" there, not "as above": a sub-skill of none is the skill; a
    skill or goal of none leaves the indicators below it without one (an error).
    An indicator with an empty level on its row and above it raises CurllError naming the
    file, row and column."""
    order = [level for level in _LEVELS if level in levels]
    current: dict[str, str | None] = dict.fromkeys(order)
    for row_no, cells in table.rows:
        for depth, level in enumerate(order):
            raw = cells[levels[level]]
            value = cell_text(raw)
            if value or normalise(raw):  # a value, or a placeholder: "none here", not "as above"
                new = value if value or level == "subskill" else None  # no sub-skill: the skill
                if new != current[level] or not value:  # the value in force, written again: as above
                    for lower in order[depth + 1 :]:
                        current[lower] = None
                current[level] = new
        for stage, col in cells_of(row_no, cells):
            for level in order:
                if current[level] is None:
                    raise CurllError(
                        f"indicator has no {_LEVEL_NAMES[level]} value on this row or above it",
                        file=table.path,
                        row=row_no,
                        field=table.header[levels[level]].strip(),
                    )
            yield IndicatorRecord(
                stage=stage,
                skill=str(current["skill"]),
                subskill=str(current.get("subskill") or current["skill"]),
                goal=str(current["goal"]),
                indicator=cell_text(cells[col]),
                source=table.path.name,
                source_row=row_no,
                source_field=table.header[col].strip(),
                path=str(table.path),
            )


def read_curll_csvs(paths: Sequence[str | Path]) -> Iterator[IndicatorRecord]:
    """Yield indicators from several files (or folders of ``*.csv``), in sorted path order."""
    for path in expand_inputs(paths, "*.csv"):
        yield from read_curll_csv(path)


def expand_inputs(paths: Sequence[str | Path], pattern: str) -> list[Path]:
    """Files as given; a folder contributes its files whose name matches ``pattern`` in any case,
    sorted."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():  # AGE_5_11.CSV is a CSV file too
            matches = sorted(f for f in p.iterdir() if f.is_file() and fnmatch(f.name.lower(), pattern))
            if not matches:
                raise CurllError(f"folder has no {pattern} files", file=p)
            out.extend(matches)
        elif p.is_file():
            out.append(p)
        else:
            raise CurllError("input not found", file=p)
    return out
