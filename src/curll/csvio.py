"""Strict CSV reading shared by the importers. A row is a spreadsheet row (a CSV record, the
header row 1), in every error too: a quoted cell over several lines is one row.

:func:`read_csv` decodes UTF-8 (a BOM is accepted) and returns the header and the data rows
with their spreadsheet row numbers (header = row 1); short rows are padded with empty cells
so importers can index columns safely (and empty cells past the header dropped). It refuses,
naming the file and row: an empty file, a file with a header and no data rows, a row with
non-empty cells past the header's (an unquoted comma, which would shift every later cell),
text that is not UTF-8 (the row of the first bad byte), a NUL byte (a UTF-16 or binary file
read as text), a quote that is never closed (which would swallow every later row into one
cell; named by the row it opens on), and a row that repeats the header (it would be read as
data: an indicator named "stage-0"). :meth:`CsvTable.column` refuses a name that two columns
share (which one was meant cannot be told).
"""

from __future__ import annotations

import codecs
import csv
import io
from dataclasses import dataclass
from pathlib import Path

from curll.errors import CurllError


@dataclass(frozen=True)
class CsvTable:
    """A decoded CSV: ``rows[i]`` is ``(spreadsheet_row, cells)``; cells are raw strings."""

    path: Path
    header: list[str]
    rows: list[tuple[int, list[str]]]

    def column(self, *names: str) -> int | None:
        """Index of the header cell equal (after strip) to the first of ``names`` the header has;
        a CurllError (row 1, naming it) when two cells hold that name."""
        stripped = [h.strip() for h in self.header]
        for name in names:
            at = self.only([i for i, h in enumerate(stripped) if h == name], name)
            if at is not None:
                return at
        return None

    def only(self, at: list[int], name: str) -> int | None:
        """The one index of ``at`` (the columns that match ``name``), None for none; a CurllError
        (row 1, naming it) for two: which one was meant cannot be told."""
        if len(at) > 1:
            raise CurllError(f"two columns are named {name!r} (columns {at[0] + 1} and {at[1] + 1}): "
                             "keep one", file=self.path, row=1, field=name)  # fmt: skip
        return at[0] if at else None


def _row_at(before: str) -> int:
    """The spreadsheet row (a CSV record, the header row 1) in which the text after ``before``
    lies: records, not lines, so a quoted cell over several lines or a file whose lines end in
    a lone CR counts as the rows a spreadsheet shows."""
    reader = csv.reader(io.StringIO(before + "\x01", newline=""))  # \x01: the record goes on
    rows = 0
    try:
        for _ in reader:
            rows += 1
    except csv.Error:  # the text ends inside a quoted cell: in the row that opened it
        rows += 1
    return max(rows, 1)


def read_csv(path: str | Path) -> CsvTable:
    """Read ``path`` strictly; see the module docstring for the contract."""
    p = Path(path)
    if p.is_dir():
        raise CurllError("is a folder; expected a CSV file", file=p)
    if not p.is_file():
        raise CurllError("file not found", file=p)
    raw = p.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        at = exc.start + (len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0)  # in the file
        raise CurllError(
            f"not valid UTF-8 (byte 0x{raw[at]:02x} at offset {at}); re-save the file as UTF-8",
            file=p,
            row=_row_at(raw[:at].decode("utf-8-sig")),
        ) from None
    if not text.strip():
        raise CurllError("file is empty", file=p)
    if "\x00" in text:
        raise CurllError("holds NUL bytes (a UTF-16 or binary file?): re-save it as UTF-8 CSV text", file=p,
                         row=_row_at(text[: text.index("\x00")]))  # fmt: skip
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records: list[list[str]] = []
    try:
        for cells in reader:
            records.append(cells)
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):  # a quote opened and never closed
            raise CurllError(
                "unclosed quote: the quoted cell that starts on this row runs to the end of the file",
                file=p, row=len(records) + 1,
            ) from None  # fmt: skip
        raise CurllError(f"malformed CSV: {exc}", file=p, row=len(records) + 1) from None
    header, body = records[0], records[1:]
    if not body:
        raise CurllError("no data rows: the file holds only its header", file=p, row=1)
    width = len(header)
    for i, cells in enumerate(body):
        extra = [c for c in cells[width:] if c.strip()]
        if extra:  # an unquoted comma splits a cell: every later cell of the row would shift
            raise CurllError(f"{len(cells)} cells under a header of {width}, the extra ones not empty "
                             f"({extra[0][:40]!r}): quote a cell that holds a comma", file=p,
                             row=i + 2)  # fmt: skip
    rows = [(i + 2, cells[:width] + [""] * (width - len(cells))) for i, cells in enumerate(body)]
    names = [h.strip() for h in header]
    if sum(map(bool, names)) > 1:  # one named column: a cell may well hold its name
        for row, cells in rows:
            if [c.strip() for c in cells] == names:
                raise CurllError("this row repeats the header (two files joined into one?): delete it, "
                                 "or it would be read as data", file=p, row=row)  # fmt: skip
    return CsvTable(path=p, header=header, rows=rows)
