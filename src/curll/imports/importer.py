"""Import downloaded release repositories into curll's records (RecordSchema), streamed.

:func:`import_release` writes, atomically as one folder::

    <out>/records.parquet   RecordSchema rows, in source order (a row group a source batch)
    <out>/skipped.parquet   every row or pair left out: file, row, pair (-1: the whole row), reason
    <out>/stats.json        records per stage, type and split; rows read and skipped per reason

Ids are content-free and stable: ``record_id`` hashes (folder name, repository kind, file name,
row, pair), so it is unique (two folders of one name are refused) and the same on a re-import;
``unit_id`` hashes (repository kind, split, stage, the kind's unit column and the passage),
so a passage's questions share a unit (and an ``id`` whose rows hold different passages gives
one unit a passage), which stays in the split the release gave it; ``indicator_id`` is the
taxonomy's own hash of (stage, skill, subskill, goal, indicator), each normalised as the taxonomy
importers do, so it matches an import of the authors' taxonomy. A row whose question or answer is
empty is skipped with its reason; nothing kept at all is an error. Memory is bounded by
``batch_rows`` rows (records and skips alike).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from curll.artifacts import atomic_dir, validate, write_json
from curll.chat import record_chat, user_turn
from curll.errors import CurllError
from curll.imports.curll_hub import META, text
from curll.imports.reader import Source, coerce_stage, open_source, rows
from curll.schemas import RecordSchema
from curll.taxonomy.model import indicator_id, normalise

RECORDS = pa.schema(
    [("record_id", pa.string()), ("unit_id", pa.string()), ("stage", pa.int64()),
     ("indicator_id", pa.string()), ("skill", pa.string()), ("subskill", pa.string()),
     ("indicator", pa.string()), ("type", pa.string()), ("split", pa.string()), ("messages", pa.string())]
)  # fmt: skip
SKIPPED = pa.schema(
    [("file", pa.string()), ("row", pa.int64()), ("pair", pa.int64()), ("reason", pa.string())]
)


def _hash(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()[:16]


class _Writer:
    """Buffers records and skips; flushes each as a validated row group."""

    def __init__(self, out: Path) -> None:
        self.records = pq.ParquetWriter(out / "records.parquet", RECORDS)
        self.skipped = pq.ParquetWriter(out / "skipped.parquet", SKIPPED)
        self.buffer: list[list[Any]] = []
        self.skips: list[list[Any]] = []
        self.written = 0
        self.counts: Counter[tuple[int, str, str]] = Counter()
        self.reasons: Counter[str] = Counter()

    def flush(self) -> None:
        if self.buffer:
            df = pd.DataFrame(self.buffer, columns=RECORDS.names)
            df.index = pd.RangeIndex(self.written, self.written + len(df))  # errors name the output row
            validate(df, RecordSchema, source="records.parquet")
            self.records.write_table(pa.Table.from_pandas(df, schema=RECORDS, preserve_index=False))
            self.written += len(df)
            self.buffer = []
        if self.skips:
            self.skipped.write_table(pa.Table.from_pylist(
                [dict(zip(SKIPPED.names, s, strict=True)) for s in self.skips], schema=SKIPPED))  # fmt: skip
            self.skips = []

    def skip(self, file: str, row: int, pair: int, reason: str) -> None:
        self.skips.append([file, row, pair, reason])
        self.reasons[reason] += 1

    def close(self, *, flush: bool = True) -> None:
        """Flush (unless an error is already on its way out) and close both files."""
        try:
            if flush:
                self.flush()
        finally:
            self.records.close()
            self.skipped.close()


def row_records(
    source: Source, path: Path, split: str, index: int, row: dict[str, Any], *, system: str
) -> tuple[list[tuple[int, list[Any]]], list[tuple[int, str]]]:
    """One source row as (pair, record in :data:`RECORDS` order) for each kept question and
    (pair, reason) for each left out (pair -1: the whole row); a CurllError for a bad stage."""
    kind = source.kind
    stage = coerce_stage(row["stage"], file=path, row=index)
    if source.stage is not None and stage != source.stage:
        raise CurllError(f"stage {stage} in a folder named for stage {source.stage}",
                         file=path, row=index, field="stage")  # fmt: skip
    meta = {m: normalise(text(row.get(m))) for m in META}
    iid = indicator_id(stage, meta["skill"], meta["subskill"], meta["goal"], meta["indicator"])
    triples = kind.triples(row)
    kept: list[tuple[int, list[Any]]] = []
    skipped: list[tuple[int, str]] = [] if triples else [(-1, "no questions")]
    for pair, (passage, question, answer) in enumerate(triples):
        reason = "empty question" if not question.strip() else "empty answer" if not answer.strip() else ""
        if reason:
            skipped.append((pair, reason))
            continue
        chat = record_chat(system, user_turn(kind.type, question, passage), answer)
        unit = _hash(kind.name, split, stage, row[kind.unit], *([passage] if passage else []))
        kept.append((pair, [record_id(source, path, index, pair), unit, stage, iid, meta["skill"],
                            meta["subskill"], meta["indicator"], kind.type, split, chat]))  # fmt: skip
    return kept, skipped


def record_id(source: Source, path: Path, row: int, pair: int) -> str:
    """The id of a source row's ``pair``-th question: content-free, so known before the row is read."""
    return _hash(source.folder.name, source.kind.name, path.name, row, pair)


def _read(source: Source, writer: _Writer, bar: tqdm[Any], *, system: str, batch_rows: int) -> int:
    read = 0
    for path, split in source.files:
        name = f"{source.folder.name}/data/{path.name}"
        for index, row in rows(path, source.kind, batch_rows=batch_rows):
            read += 1
            bar.update()
            kept, skipped = row_records(source, path, split, index, row, system=system)
            for pair, reason in skipped:
                writer.skip(name, index, pair, reason)
            for _, record in kept:
                writer.buffer.append(record)
                writer.counts[(record[2], record[7], split)] += 1
            if len(writer.buffer) >= batch_rows or len(writer.skips) >= batch_rows:
                writer.flush()
    return read


def import_release(
    sources: Sequence[tuple[Path, str | None]],
    out: str | Path,
    *,
    system: str = "",
    batch_rows: int = 8192,
) -> dict[str, Any]:
    """Import ``sources`` ((folder, kind or None), :func:`curll.imports.reader.parse_source`) into
    ``out`` (layout above); returns the stats. Every source is checked before any row is read;
    bad input is a CurllError naming the file, row and column, and leaves ``out`` as it was."""
    opened = [open_source(folder, kind) for folder, kind in sources]
    seen: dict[str, Path] = {}
    for source in opened:  # record ids hash the folder's name: two of one name would collide
        if source.folder.name in seen:
            first = seen[source.folder.name]
            raise CurllError(f"a second folder named {source.folder.name!r} (the first: {first}): "
                             "pass each repository once", file=source.folder)  # fmt: skip
        seen[source.folder.name] = source.folder
    with atomic_dir(out) as tmp:
        writer = _Writer(tmp)
        read: dict[str, int] = {}
        total = sum(pq.ParquetFile(path).metadata.num_rows for s in opened for path, _ in s.files)
        try:
            with tqdm(total=total, desc="release import", unit="row") as bar:
                for source in opened:
                    read[str(source.folder)] = _read(
                        source, writer, bar, system=system, batch_rows=batch_rows
                    )
        except BaseException:
            writer.close(flush=False)  # the first error is the one to report
            raise
        writer.close()
        if writer.written == 0:
            why = ", ".join(f"{r} {n}" for r, n in writer.reasons.most_common()) or "no rows"
            raise CurllError(f"the import kept no records ({why})", file=out)
        stats = {
            "records": writer.written,
            "by_stage_type_split": {f"{s}/{t}/{p}": n for (s, t, p), n in sorted(writer.counts.items())},
            "rows_read": read,
            "skipped": dict(sorted(writer.reasons.items())),
        }
        write_json(tmp / "stats.json", stats)
    return stats
