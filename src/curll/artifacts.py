"""Reading and writing artifacts: validated on both sides, written atomically.

Contract:
- ``write_table`` validates a DataFrame against its pandera schema *before* anything
  touches the disk, then writes parquet to a temporary file in the target folder and
  renames it into place. A crash or a validation error never leaves a half-written or
  invalid file at ``path``.
- ``read_table`` reads parquet and validates it, so a stage never computes on data
  that does not match the schema it expects.
- Validation failures become :class:`CurllError` naming the file, the first failing
  row (0-based table index, as stored) and the field, plus a short list of the others.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pandera.errors as pa_errors
import pandera.pandas as pa

from curll.errors import CurllError

#: at most this many failures are listed in one validation message
_MAX_LISTED = 5

#: rows per parquet row group: a reader that streams a table (curll.streaming) decodes one row
#: group at a time, so this bounds its memory (pyarrow's default, 1M rows, would not)
ROW_GROUP_ROWS = 4096


#: a write that fails for one of these is the disk's or the folder's fault, not a bug
_CANNOT_WRITE = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def _writing(target: Path) -> Iterator[None]:
    """Turn a full disk, a read-only folder or a missing permission into a CurllError naming
    ``target`` (the earlier output, if any, is untouched: only the temporary was written)."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in _CANNOT_WRITE:
            raise
        raise CurllError(
            f"cannot write: {os.strerror(exc.errno)} ({exc.filename or target.parent})", file=target
        ) from None


@contextmanager
def _creating(target: Path) -> Iterator[None]:
    """Create ``target``'s folder and clear the temporaries that killed writers left beside it;
    a parent that is a file, or a folder that cannot hold files, is a CurllError naming ``target``."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _clear_stale(target)
        yield
    except OSError as exc:
        if exc.errno in _CANNOT_WRITE:
            raise
        why = exc.strerror or type(exc).__name__
        raise CurllError(f"cannot write here: {why} ({exc.filename or target.parent})", file=target) from None


def _tmp_prefix(target: Path) -> str:
    """Temporaries are named ``.<name>.<pid>-<random>.tmp``: the pid tells a dead writer's."""
    return f".{target.name}.{os.getpid()}-"


def _clear_stale(target: Path) -> None:
    """Remove the temporaries of ``target`` whose writer (a process of this machine) is gone:
    a writer killed with SIGKILL cannot remove its own."""
    ours = re.compile(rf"\.{re.escape(target.name)}\.(\d+)-[a-z0-9_]{{8}}\.tmp")  # tempfile's 8 characters
    for entry in target.parent.iterdir():
        m = ours.fullmatch(entry.name)
        if m is None or int(m[1]) == os.getpid() or _alive(int(m[1])):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` on success.

    On any exception the temporary file is removed and ``path`` is left as it was. The file
    gets the mode a plain ``open`` would give (0666 less the umask), not ``mkstemp``'s 0600,
    so outputs on a shared folder stay readable by the group. ``path`` being a folder, a full
    disk or a read-only folder is a CurllError naming ``path``.
    """
    target = Path(path)
    if target.is_dir():
        raise CurllError("is a folder; expected a file path", file=target)
    with _writing(target):
        with _creating(target):
            fd, tmp_name = tempfile.mkstemp(prefix=_tmp_prefix(target), suffix=".tmp", dir=target.parent)
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            yield tmp
            tmp.chmod(0o666 & ~_umask())
            tmp.replace(target)
        finally:
            tmp.unlink(missing_ok=True)


@contextmanager
def atomic_dir(path: str | Path) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``path``; it replaces ``path`` on success.

    On any exception the temporary folder is removed and ``path`` is left as it was. The
    folder gets 0777 less the umask (not ``mkdtemp``'s 0700); ``path`` being a file, a full
    disk or a read-only folder is a CurllError naming ``path``.
    """
    target = Path(path)
    if target.is_file():
        raise CurllError("is a file; expected a folder path", file=target)
    with _writing(target):
        with _creating(target):
            tmp = Path(tempfile.mkdtemp(prefix=_tmp_prefix(target), suffix=".tmp", dir=target.parent))
        try:
            yield tmp
            mask = _umask()  # libraries write some files 0600 (safetensors): all as open() would
            for inner in tmp.rglob("*"):
                inner.chmod((0o777 if inner.is_dir() else 0o666) & ~mask)
            tmp.chmod(0o777 & ~mask)
            if target.exists():
                old = target.with_name(f".{target.name}.old")
                shutil.rmtree(old, ignore_errors=True)
                target.replace(old)
                tmp.replace(target)
                shutil.rmtree(old)
            else:
                tmp.replace(target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def json_text(obj: Any) -> str:
    """``obj`` as indented, key-sorted JSON (stable diffs for DVC metrics)."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_json(path: str | Path, obj: Any) -> None:
    """Write ``obj`` as :func:`json_text` atomically."""
    atomic_write_text(path, json_text(obj))


def validate(df: pd.DataFrame, schema: type[pa.DataFrameModel], *, source: str | Path) -> pd.DataFrame:
    """Validate ``df`` with ``schema``; raise CurllError naming ``source``, row and field."""
    try:
        return schema.validate(df, lazy=True)
    except pa_errors.SchemaErrors as exc:
        raise schema_error(exc, schema, source) from None


def write_table(
    df: pd.DataFrame,
    path: str | Path,
    schema: type[pa.DataFrameModel],
    *,
    writer: Callable[[pd.DataFrame, Path], None] | None = None,
) -> None:
    """Validate ``df`` against ``schema`` and write it to ``path`` as parquet, atomically.

    An empty ``df`` (an empty shard) takes the schema's dtypes first: pandas gives an empty
    frame object columns, which are no type error of the data."""
    valid = checked(df, schema, path)
    with atomic_path(path) as tmp:
        if writer is None:
            valid.to_parquet(tmp, index=False, row_group_size=ROW_GROUP_ROWS)
        else:
            writer(valid, tmp)


def write_table_and_stats(
    df: pd.DataFrame, path: str | Path, schema: type[pa.DataFrameModel], stats_path: str | Path, stats: Any
) -> dict[str, object]:
    """:func:`write_table` ``df`` to ``path`` and ``stats`` (a mapping) as JSON to ``stats_path``:
    both are written to temporaries before either is renamed, so an error leaves both as they
    were (a kill between the two renames can still leave one); return the stats as a dict (the
    importers' and stages' summary)."""
    valid = checked(df, schema, path)
    with atomic_path(path) as table:  # each written where only its own path is named in an error
        valid.to_parquet(table, index=False, row_group_size=ROW_GROUP_ROWS)
        with atomic_path(stats_path) as text:
            text.write_text(json_text(stats), encoding="utf-8")
    return dict(stats)


def write_tables(tables: Sequence[tuple[pd.DataFrame, str | Path, type[pa.DataFrameModel]]]) -> None:
    """All or nothing: validate every (frame, path, schema) first, then write each atomically;
    a table that fails validation leaves every output as it was (none is replaced)."""
    valid = [(checked(df, s, path), path) for df, path, s in tables]
    for df, path in valid:
        with atomic_path(path) as tmp:
            df.to_parquet(tmp, index=False, row_group_size=ROW_GROUP_ROWS)


def checked(df: pd.DataFrame, schema: type[pa.DataFrameModel], path: str | Path) -> pd.DataFrame:
    """``df`` validated for writing to ``path``; an empty frame takes the schema's dtypes first."""
    if df.empty:
        columns = schema.to_schema().columns
        df = df.astype(
            {n: c.dtype.type for n, c in columns.items() if n in df.columns and c.dtype is not None}
        )
    return validate(df, schema, source=path)


def read_table(
    path: str | Path, schema: type[pa.DataFrameModel], *, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Read a parquet artifact and validate it against ``schema`` (with ``columns``: only those
    columns are read, and validated against their part of the schema)."""
    p = Path(path)
    if not p.is_file():
        raise CurllError("artifact not found (did the stage that makes it run?)", file=p)
    try:
        df = pd.read_parquet(p, columns=None if columns is None else list(columns))
    except Exception as exc:  # pyarrow raises several unrelated types for a corrupt file
        raise CurllError(f"not a readable parquet file ({exc})", file=p) from None
    if columns is None:
        return validate(df, schema, source=p)
    part = schema.to_schema().select_columns(list(columns))
    try:
        return part.validate(df, lazy=True)
    except pa_errors.SchemaErrors as exc:
        raise schema_error(exc, schema, p) from None


_COLUMN_CHECKS = ("column_in_dataframe", "column_in_schema")
#: pandera's own table checks, which name their fields (a custom check of whole rows names none)
_PANDERAS = (*_COLUMN_CHECKS, "multiple_fields_uniqueness")


def schema_error(
    exc: pa_errors.SchemaErrors, schema: type[pa.DataFrameModel], source: str | Path
) -> CurllError:
    cases = exc.failure_cases
    whole = cases["schema_context"].eq("DataFrameSchema") & ~cases["check"].isin(_PANDERAS)
    # a custom check of whole rows fails once per column of the row: once a row is enough
    cases = cases.assign(whole=whole)[~(whole & cases.duplicated(["index", "check"]))]
    lines = []
    first_row: int | None = None
    first_field: str | None = None
    for rec in cases.head(_MAX_LISTED).to_dict("records"):
        column = rec.get("column")
        index = rec.get("index")
        check = rec.get("check")
        value = rec.get("failure_case")
        if check in _COLUMN_CHECKS:
            column = str(value)  # a missing or unexpected column: its name is the failure case
        elif column == schema.__name__ or rec["whole"]:
            column = None  # a table-level failure: the check's name says which fields
            value = None if index is not None and not pd.isna(index) else value
        row = None if index is None or pd.isna(index) else int(index)
        if first_field is None and column is not None:
            first_field = str(column)
        if first_row is None and row is not None:
            first_row = row
        where = ", ".join(
            x for x in (f"row {row}" if row is not None else "", f"field {column!r}" if column else "") if x
        )
        lines.append(f"{where or 'table'}: failed {check}" + ("" if value is None else f" (value {value!r})"))
    more = len(cases) - _MAX_LISTED
    if more > 0:
        lines.append(f"and {more} more")
    message = f"does not match schema {schema.__name__}: " + "; ".join(lines)
    return CurllError(message, file=source, row=first_row, field=first_field)


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``df`` as dicts keyed by column name (str-typed for the type checker)."""
    return [{str(k): v for k, v in row.items()} for row in df.to_dict("records")]


def count_by(df: pd.DataFrame, by: list[str]) -> dict[str, int]:
    """Row counts per group, keyed "v1/v2" (stable JSON keys for DVC metrics)."""
    sizes = df.groupby(by).size()
    out: dict[str, int] = {}
    for key, n in sizes.items():
        parts = key if isinstance(key, tuple) else (key,)
        out["/".join(str(p) for p in parts)] = int(n)
    return out


def empty_table(schema: type[pa.DataFrameModel]) -> pd.DataFrame:
    """A table with no rows and the columns and dtypes of ``schema``."""
    columns = schema.to_schema().columns
    return pd.DataFrame({name: pd.Series(dtype=col.dtype.type) for name, col in columns.items()})
