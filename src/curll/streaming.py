"""Tables too big for memory: written and read a parquet row group (batch) at a time, with
the validation and atomicity of :mod:`curll.artifacts` (a batch is validated before it is
written; the file appears whole or not at all; an error names the file's row and field).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.errors as pa_errors
import pandera.pandas as pa

from curll.artifacts import atomic_path, checked, empty_table, schema_error
from curll.errors import CurllError


def write_table_stream(
    chunks: Iterable[pd.DataFrame], path: str | Path, schema: type[pa.DataFrameModel]
) -> int:
    """Validate each chunk and append it to ``path`` as a parquet row group, atomically (the
    file appears whole, or not at all); memory holds one chunk. Checks that span chunks
    (uniqueness of a column over the whole table) are the producer's to guarantee. Returns the
    number of rows written; no chunk at all writes an empty table of ``schema``."""
    [rows] = write_table_streams([(path, schema)], ([chunk] for chunk in chunks))
    return rows


def write_table_streams(
    outputs: Sequence[tuple[str | Path, type[pa.DataFrameModel]]],
    chunks: Iterable[Sequence[pd.DataFrame]],
    *,
    texts: Callable[[], Mapping[str | Path, str]] | None = None,
) -> list[int]:
    """:func:`write_table_stream` for several tables at once: each item of ``chunks`` holds one
    frame per output (in the order of ``outputs``; an empty frame adds nothing). All or
    nothing: the outputs are renamed into place only after the last chunk, so an error on the
    way leaves every earlier output as it was. ``texts``, called after the last chunk, gives
    text files (path -> text: a stage's metrics, its plots) written with the tables, all or
    none as they are. Returns the rows written per output."""
    import pyarrow as arrow
    import pyarrow.parquet as pq

    rows = [0] * len(outputs)
    with ExitStack() as stack:
        tmps = [stack.enter_context(atomic_path(path)) for path, _ in outputs]
        writers: list[pq.ParquetWriter | None] = [None] * len(outputs)
        try:
            for frames in chunks:
                for k, (df, (path, schema)) in enumerate(zip(frames, outputs, strict=True)):
                    if df.empty:
                        continue  # nothing to add (an output with no rows at all is written below)
                    table = arrow.Table.from_pandas(checked(df, schema, path), preserve_index=False)
                    writer = writers[k]
                    if writer is None:
                        writer = writers[k] = pq.ParquetWriter(tmps[k], table.schema)
                    writer.write_table(table.cast(writer.schema))
                    rows[k] += table.num_rows
        finally:
            for writer in writers:
                if writer is not None:
                    writer.close()
        for k, (path, schema) in enumerate(outputs):
            if writers[k] is None:
                checked(empty_table(schema), schema, path).to_parquet(tmps[k], index=False)
        for path, text in (texts() if texts is not None else {}).items():
            stack.enter_context(atomic_path(path)).write_text(text, encoding="utf-8")
    return rows


def iter_table(
    path: str | Path,
    schema: type[pa.DataFrameModel],
    *,
    columns: Sequence[str] | None = None,
    batch_rows: int = 4096,
) -> Iterator[pd.DataFrame]:
    """:func:`read_table` a batch at a time: each batch validated, indexed by its rows' numbers
    in the file (so an error names the file's row). Checks that span batches (uniqueness) are
    not made: the caller's, where it needs them."""
    import pyarrow.parquet as pq

    p = Path(path)
    if not p.is_file():
        raise CurllError("artifact not found (did the stage that makes it run?)", file=p)
    part = schema.to_schema() if columns is None else schema.to_schema().select_columns(list(columns))
    start = 0
    try:
        batches = pq.ParquetFile(p).iter_batches(
            batch_size=batch_rows, columns=None if columns is None else list(columns)
        )
        for batch in batches:
            df = batch.to_pandas()
            df.index = pd.RangeIndex(start, start + len(df))
            start += len(df)
            try:
                yield part.validate(df, lazy=True)
            except pa_errors.SchemaErrors as exc:
                raise schema_error(exc, schema, p) from None
    except (OSError, ValueError) as exc:  # pyarrow's errors for a damaged file
        raise CurllError(f"not a readable parquet file ({exc})", file=p) from None


def check_unique(path: str | Path, column: str) -> int:
    """No value twice in ``column`` of ``path`` (only that column is read): the check that
    :func:`iter_table` leaves to its caller. The error names the file, the first repeated value
    and the row of its second occurrence. Returns the table's row count."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        values = pq.read_table(path, columns=[column]).column(0)
    except (OSError, ValueError, KeyError) as exc:
        raise CurllError(f"not a readable parquet file ({exc})", file=path) from None
    counts = pc.value_counts(values)
    twice = counts.filter(pc.greater(counts.field("counts"), 1))
    if len(twice):
        value = twice.field("values")[0]
        second = pc.indices_nonzero(pc.equal(values, value))[1].as_py()
        raise CurllError(f"{column} {value} appears more than once", file=path, row=second, field=column)
    return len(values)


def whole_groups(batches: Iterable[pd.DataFrame], key: str) -> Iterator[pd.DataFrame]:
    """Re-cut ``batches`` so that no run of equal ``key`` values spans two of them (a run at the
    end of a batch moves to the next one; index kept). Memory: a batch plus one run."""
    carry: pd.DataFrame | None = None
    for df in batches:
        if carry is not None:
            df = pd.concat([carry, df])
        values = df[key].to_numpy()
        if not len(values):
            continue
        differs = np.flatnonzero(values != values[-1])
        cut = int(differs[-1]) + 1 if len(differs) else 0
        if cut:
            yield df.iloc[:cut]
        carry = df.iloc[cut:]
    if carry is not None and len(carry):
        yield carry
