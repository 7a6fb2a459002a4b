"""Reader for a curriculum in your own CSV shape: its columns named in params, its grades mapped to stages.

Two shapes (one file, or a folder of ``*.csv`` read in name order)::

    # one indicator a row, its grade in a column      # grades as columns, one indicator a cell
    Domain,Standard,Indicator,Grade                    Domain,Standard,Grade K,Grade 1
    Reading,Phonics,Names the letters,K                Reading,Phonics,Names the letters,Blends sounds
    ,,Blends two sounds,1                              ,Fluency,,Reads aloud

:class:`TableLayout` says which columns hold the skill, the sub-skill (optional: without one
an indicator's sub-skill is its skill), the goal, and either the indicator and grade columns
(first shape: ``grades`` maps the grade *values* to stages) or nothing more (second shape:
``grades`` maps grade *column headers* to stages, and every non-empty cell in those columns
is an indicator). A grade mapped to ``None`` is left out on purpose. Header names match
after white-space folding, ignoring case; hierarchy cells fill down as in the CurLL layout, and
a placeholder cell (``N/A``, ``-``) is no indicator, and none in a hierarchy column (the CurLL
layout's ``walk_rows``).

Failure behaviour (:class:`CurllError`, naming file, row and column): a named column missing
from the header, or two columns of that name; a grade column of ``grades`` missing (second
shape); a grade value that ``grades`` does not map, or an empty grade next to an indicator
(first shape); an indicator with no skill or goal on its row or above it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from curll.csvio import CsvTable, read_csv
from curll.errors import CurllError
from curll.taxonomy.curll_csv import expand_inputs, walk_rows
from curll.taxonomy.model import IndicatorRecord, cell_text, normalise


@dataclass(frozen=True)
class TableLayout:
    """Where a table keeps each part of an indicator; see the module docstring."""

    skill: str
    goal: str
    grades: Mapping[str, int | None] = field(default_factory=dict)
    subskill: str | None = None
    indicator: str | None = None
    grade: str | None = None

    def __post_init__(self) -> None:
        if (self.indicator is None) != (self.grade is None):
            raise CurllError(
                "name both the indicator and the grade column (one indicator a row), or neither "
                "(grades as columns)", field="taxonomy.columns",
            )  # fmt: skip
        if not self.grades:
            raise CurllError("map at least one grade to a stage", field="taxonomy.grades")
        folded: dict[str, str] = {}
        for name in self.grades:  # grades match in any case: two that differ only in case collide
            seen = folded.setdefault(normalise(name).lower(), name)
            if seen != name:
                raise CurllError(f"grades {seen!r} and {name!r} differ only in case, and grades match in "
                                 "any case: give one", field="taxonomy.grades")  # fmt: skip


def read_tables(paths: Sequence[str | Path], layout: TableLayout) -> Iterator[IndicatorRecord]:
    """Yield the indicators of every file, in sorted path order and file order."""
    for path in expand_inputs(paths, "*.csv"):
        yield from read_table(path, layout)


def read_table(path: str | Path, layout: TableLayout) -> Iterator[IndicatorRecord]:
    """Yield the indicators of one file laid out as ``layout`` says."""
    table = read_csv(path)
    named = {"skill": layout.skill, "subskill": layout.subskill, "goal": layout.goal}
    levels = {level: _find(table, header, level) for level, header in named.items() if header is not None}
    if layout.indicator is not None and layout.grade is not None:
        yield from _one_a_row(table, levels, layout)
        return
    columns = {_find(table, header, "grades"): stage for header, stage in layout.grades.items()}
    wanted = {col: stage for col, stage in columns.items() if stage is not None}
    yield from walk_rows(
        table, levels, lambda _, row: ((s, c) for c, s in wanted.items() if cell_text(row[c]))
    )


def _one_a_row(table: CsvTable, levels: dict[str, int], layout: TableLayout) -> Iterator[IndicatorRecord]:
    assert layout.indicator is not None and layout.grade is not None
    text_col = _find(table, layout.indicator, "indicator")
    grade_col = _find(table, layout.grade, "grade")
    grades = {normalise(k).lower(): v for k, v in layout.grades.items()}

    def cells_of(row_no: int, cells: list[str]) -> Iterator[tuple[int, int]]:
        if not cell_text(cells[text_col]):
            return
        grade = normalise(cells[grade_col])
        if grade.lower() not in grades:
            raise CurllError(
                f"grade {grade!r} is not in taxonomy.grades {sorted(layout.grades)}"
                if grade else "an indicator with no grade",
                file=table.path, row=row_no, field=table.header[grade_col].strip(),
            )  # fmt: skip
        stage = grades[grade.lower()]
        if stage is not None:
            yield stage, text_col

    yield from walk_rows(table, levels, cells_of)


def _find(table: CsvTable, header: str, key: str) -> int:
    """Index of the column named ``header`` (white space folded, any case); else CurllError."""
    wanted = normalise(header).lower()
    at = table.only(
        [idx for idx, cell in enumerate(table.header) if normalise(cell).lower() == wanted], header
    )
    if at is not None:
        return at
    raise CurllError(
        f"no column {header!r} (taxonomy.{'grades' if key == 'grades' else 'columns.' + key}); the "
        f"header has {[h.strip() for h in table.header]}", file=table.path, row=1, field=header,
    )  # fmt: skip
