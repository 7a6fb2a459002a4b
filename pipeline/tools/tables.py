"""Tables for a screen of any width (``curll results``, ``curll experiments``).

:func:`fitted` lays rows of strings out as a rich table: cells on one line where the table
fits the console; where it does not, the ``fold`` columns (free text) wrap; where it still
does not, each ``v [lo, hi]`` cell also puts its interval under its value (``4.85 [4.64,
5.05]``, 17 characters, becomes 12 wide) and columns are one space apart: ``curll results``
fits 80 columns. A table still too wide then wraps every cell: no column is dropped and no
character cut.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

#: a cell of :func:`curll.evaluate.headline.fmt`: a value, a space, its interval
_SPAN = re.compile(r"^(\S+) (\[[^\]]*\])$")


def stacked(cell: str) -> str:
    """``4.85 [4.64, 5.05]`` as two lines, value over interval; any other cell as it is."""
    return _SPAN.sub(r"\1\n\2", cell)


def fitted(
    console: Console,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    fold: Collection[str] = (),
    sections: Collection[int] = (),
) -> Table:
    """A table of ``rows`` under ``columns`` for ``console``'s width (see the module); a line
    above each row index in ``sections``. Cells are plain text, never rich markup."""
    wide = console.options.update_width(1 << 20)  # measured unbounded: rich caps a measure at the width

    def fits(table: Table) -> bool:
        return Measurement.get(console, wide, table).maximum <= console.width

    one_line = _table(columns, rows, (), False, sections)
    if fits(one_line):
        return one_line
    if fold:  # measured with each folded cell as narrow as its longest word: the least it can take
        least = [[_longest(c) if n in fold else c for n, c in zip(columns, r, strict=True)] for r in rows]
        if fits(_table(columns, least, fold, False, sections)):
            return _table(columns, rows, fold, False, sections)
    return _table(columns, rows, fold, True, sections)


def _longest(cell: str) -> str:
    return max(cell.split() or [""], key=len)


def _table(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    fold: Collection[str],
    narrow: bool,
    sections: Collection[int],
) -> Table:
    tight = {"show_edge": False, "padding": (0, 0)} if narrow else {"collapse_padding": True}
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, **tight)  # tight: one space between columns
    for name in columns:  # narrow: every cell may wrap, so none is ever cut (a cut number reads as
        wraps = narrow or name in fold  # another number)
        table.add_column(name, no_wrap=not wraps, overflow="fold", min_width=12 if name in fold else None)
    for i, row in enumerate(rows):
        if i in sections:
            table.add_section()
        table.add_row(*(Text(stacked(c) if narrow else c) for c in row))
    return table
