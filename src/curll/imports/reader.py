"""One downloaded repository folder of a release, read a batch at a time.

:func:`open_source` finds the folder's kind, stage and data files and checks every file's columns
and types, and that each split's files are all the shards their names count, before a row is
read; :func:`rows` then yields each file's rows a parquet batch at a time, so memory is bounded
by a batch (``batch_rows``), not by the table; a file that cannot be decoded is a CurllError
naming it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from curll.errors import CurllError, one_line
from curll.imports.curll_hub import KINDS, SPLIT_NAMES, Kind, from_folder
from curll.imports.layout import data_files
from curll.schemas import MAX_STAGE


@dataclass(frozen=True)
class Source:
    """A repository folder: its kind, the stage its name gives (None: read from the rows) and its
    data files with the curll split each holds."""

    folder: Path
    kind: Kind
    stage: int | None
    files: tuple[tuple[Path, str], ...]


def parse_source(arg: str) -> tuple[Path, str | None]:
    """``PATH`` or ``KIND=PATH`` (KIND one of :data:`KINDS`, for a folder not named stage<N>_<kind>)."""
    head, sep, tail = arg.partition("=")
    if sep and head in KINDS:
        return Path(tail), head
    if sep and re.fullmatch(r"[a-z_]+", head) and not Path(arg).exists():  # a KIND=PATH of no kind
        raise CurllError(f"unknown KIND {head!r} in KIND=PATH; KIND is one of {', '.join(KINDS)}", file=tail)
    return Path(arg), None


def _plain(typ: pa.DataType) -> pa.DataType:
    """A dictionary-encoded column's values' type (pandas writes a categorical so); else ``typ``.
    Rows are read as Python values, which decode a dictionary."""
    return typ.value_type if pa.types.is_dictionary(typ) else typ


def _text(typ: pa.DataType) -> bool:
    """A column (or struct field) of text: a string of any arrow layout, or nulls only."""
    typ = _plain(typ)
    return bool(pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ)
                or pa.types.is_null(typ))  # fmt: skip


def _check_types(path: Path, schema: pa.Schema, kind: Kind) -> None:
    for column in ("stage", *kind.columns):
        if schema.names.count(column) > 1:
            raise CurllError("the column appears twice", file=path, field=column)
        if column not in schema.names:
            raise CurllError(f"missing column (a {kind.name} repository has {', '.join(kind.columns)} "
                             "and stage)", file=path, field=column)  # fmt: skip
        typ = schema.field(column).type
        if column == "stage":
            ok = (pa.types.is_integer(_plain(typ)) or _text(typ)) and not pa.types.is_null(typ)
        elif column == "csqa" and pa.types.is_null(typ):  # no cell holds a list: each row is skipped
            ok = True
        elif column == "csqa":
            ok = (pa.types.is_list(typ) or pa.types.is_large_list(typ)) and pa.types.is_struct(typ.value_type)
            fields = {f.name: f.type for f in typ.value_type} if ok else {}
            ok = ok and all(name in fields and _text(fields[name]) for name in ("question", "answer"))
        else:
            ok = _text(typ)
        if not ok:
            want = {"stage": "an integer or a string", "csqa": "a list of {answer, question} text structs"}
            raise CurllError(
                f"has type {typ}, expected {want.get(column, 'a string')}", file=path, field=column
            )


def _check_shards(folder: Path, split: str, parts: list[tuple[int, int, Path]]) -> None:
    """A split's files are shards 0..N-1 of one N, each once: a partial download or files of two
    revisions of the repository (a re-download into the same folder keeps the old names) would
    otherwise import as a whole split, missing rows or holding some twice."""
    totals = sorted({total for _, total, _ in parts})
    if len(totals) > 1:
        mixed = " and of ".join(map(str, totals))
        raise CurllError(f"{split} files of {mixed} shards mixed (two downloads in one folder?): keep "
                         "one revision's files", file=folder / "data")  # fmt: skip
    indices = sorted(index for index, _, _ in parts)
    problems = [f"shard {i:05d} twice" for i in sorted(set(indices)) if indices.count(i) > 1]
    problems += [f"missing shard {i:05d}" for i in range(totals[0]) if i not in indices]
    problems += [f"shard {i:05d} past the count" for i in indices if i >= totals[0]]
    if problems:
        what = problems[0]
        raise CurllError(f"{split} is not the {totals[0]} shards its file names count: {what} (an "
                         "interrupted or mixed download?)", file=folder / "data")  # fmt: skip


def open_source(folder: Path, kind_name: str | None) -> Source:
    """The repository at ``folder`` (of ``kind_name`` when given, else named by its folder),
    checked: a CurllError names the folder or file and column when it is not one."""
    if not folder.is_dir():
        raise CurllError("not a folder (a downloaded repository folder is expected)", file=folder)
    try:
        named = from_folder(Path(os.path.abspath(folder)).name)  # noqa: PTH100  # "." its folder; a link itself
    except ValueError as exc:
        raise CurllError(str(exc), file=folder) from None
    if kind_name is None and named is None:
        raise CurllError(
            "not a curll-hub repository folder: its name is not stage<N>_<kind>; pass it as KIND=PATH "
            f"with KIND one of {', '.join(KINDS)}",
            file=folder,
        )
    if kind_name is not None and named is not None and named[1] != kind_name:
        raise CurllError(f"named as a {named[1]} repository but passed as {kind_name}", file=folder)
    if named is not None and named[0] > MAX_STAGE:
        raise CurllError(f"named for stage {named[0]}, and curll's stages go 0..{MAX_STAGE}", file=folder)
    kind = KINDS[kind_name if kind_name is not None else named[1]]  # type: ignore[index]
    files = []
    shards: dict[str, list[tuple[int, int, Path]]] = {}
    for path, m in data_files(folder):
        shards.setdefault(m["split"], []).append((int(m["index"]), int(m["total"]), path))
        try:
            meta = pq.read_metadata(path)
        except Exception as exc:  # pyarrow raises several unrelated types for a corrupt file
            raise CurllError(f"not a readable parquet file ({exc})", file=path) from None
        if meta.num_rows:  # an empty shard holds no row to read (pandas writes its columns as null)
            _check_types(path, meta.schema.to_arrow_schema(), kind)
        files.append((path, SPLIT_NAMES[m["split"]]))
    if not files:
        raise CurllError("holds no data/<split>-NNNNN-of-NNNNN.parquet file", file=folder)
    for split, parts in shards.items():
        _check_shards(folder, split, parts)
    return Source(folder, kind, named[0] if named else None, tuple(files))


def coerce_stage(value: Any, *, file: Path, row: int) -> int:
    """``stage`` as the int it names (an int64 or a string of digits in the release), 0 to
    :data:`~curll.schemas.MAX_STAGE`."""
    text = str(value).strip() if value is not None else ""
    if text.startswith("-") and text[1:].isascii() and text[1:].isdecimal() and int(text) < 0:
        raise CurllError(f"stage {text} is below 0, the first stage", file=file, row=row, field="stage")
    if not (text.isascii() and text.isdecimal()):
        raise CurllError(f"stage {value!r} is not a whole number", file=file, row=row, field="stage")
    if int(text) > MAX_STAGE:
        raise CurllError(f"stage {text} is above {MAX_STAGE}, the last stage curll has", file=file, row=row,
                         field="stage")  # fmt: skip
    return int(text)


def rows(
    path: Path, kind: Kind, *, batch_rows: int, only: Sequence[int] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(0-based row in the file, row as a dict of the columns the kind reads), a batch at a time;
    with ``only`` (sorted row numbers) just those rows, reading only the row groups that hold them
    (memory then bounded by a row group's columns, not by ``batch_rows``)."""
    try:
        yield from _rows(path, kind, batch_rows=batch_rows, only=only)
    except (OSError, pa.ArrowException, UnicodeDecodeError) as exc:
        raise CurllError(f"cannot be read: {type(exc).__name__}: {one_line(exc, 300)}", file=path) from None


def _rows(
    path: Path, kind: Kind, *, batch_rows: int, only: Sequence[int] | None
) -> Iterator[tuple[int, dict[str, Any]]]:
    parquet = pq.ParquetFile(path)
    columns = ["stage", *kind.columns]
    if only is None:
        index = 0
        for batch in parquet.iter_batches(batch_size=batch_rows, columns=columns):
            for row in batch.to_pylist():
                yield index, row
                index += 1
        return
    wanted, at, start = list(only), 0, 0
    for group in range(parquet.num_row_groups):
        n = parquet.metadata.row_group(group).num_rows
        end = at
        while end < len(wanted) and wanted[end] < start + n:
            end += 1
        if end > at:
            table = parquet.read_row_group(group, columns=columns)
            for offset in range(at, end, batch_rows):
                picked = [w - start for w in wanted[offset : min(end, offset + batch_rows)]]
                for w, row in zip(picked, table.take(picked).to_pylist(), strict=True):
                    yield start + w, row
            at = end
        start += n
