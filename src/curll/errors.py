"""One user-facing error type that says *where* the problem is.

Every bad input (a malformed CSV, an unknown param, a table that fails its schema)
is raised as :class:`CurllError` carrying the file, the row and the field. The CLI
prints ``str(error)`` and exits non-zero; a traceback is for bugs, not for bad data.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path


class CurllError(Exception):
    """Bad input or bad params, located by file, row and field where known.

    ``row`` is where a person would look: in a CSV, the spreadsheet row (the header
    is row 1, the first data row is row 2); in a YAML file, the line (a list item's first); in a
    parquet table, the 0-based table index. ``field`` is a column name or a dotted
    params key.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        row: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = str(file) if file is not None else None
        self.row = row
        self.field = field

    def __str__(self) -> str:
        where = []
        if self.file is not None:
            where.append(self.file)
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.field is not None:
            where.append(f"field {self.field!r}")
        return f"{', '.join(where)}: {self.message}" if where else self.message


@contextmanager
def fields_named(names: Mapping[str, str], text: Mapping[str, str] | None = None) -> Iterator[None]:
    """Within the block, a :class:`CurllError` whose ``field`` is a key of ``names`` is raised with
    that field renamed: a library names its argument (``stages``), its caller what the user wrote
    (``taxonomy.stages`` in params, ``--stages`` on the command line). ``text``: settings a
    message names, each replaced in its text (``taxonomy.grades`` -> ``--grades``)."""
    try:
        yield
    except CurllError as exc:
        if exc.field is not None and exc.field in names:
            exc.field = names[exc.field]
        for old, new in (text or {}).items():
            exc.message = exc.message.replace(old, new)
        raise


def one_line(exc: BaseException, limit: int | None = 200) -> str:
    """``exc``'s message on one line (library messages span several), cut at ``limit`` characters
    (None: whole)."""
    return " ".join(str(exc).split())[:limit]
