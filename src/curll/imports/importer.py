"""Import downloaded release repositories into curll's records (RecordSchema), streamed.

:func:`import_release` writes, atomically as one folder (resumable: a file at a time)::

    <out>/records.parquet   RecordSchema rows, in source order (a row group a source batch)
    <out>/skipped.parquet   every row or pair left out: file, row, pair (-1: the whole row), reason
    <out>/stats.json        records per stage, type and split; rows read and skipped per reason

Ids are content-free and stable: ``record_id`` hashes (folder name, repository kind, file name,
row, pair), so it is unique (two folders of one name are refused) and the same on a re-import;
``unit_id`` hashes (repository kind, split, stage, the kind's unit column and the passage),
so a passage's questions share a unit (and an ``id`` whose rows hold different passages gives
one unit a passage), which stays in the split the release gave it; ``indicator_id`` is the
taxonomy's own hash of (stage, skill, subskill, goal, indicator), each normalised as the taxonomy
importers do, so it matches an import of the authors' taxonomy. A question whose passage (CQA,
CSQA), question or answer is empty is skipped with its reason; nothing kept at all is an error.
Memory is bounded by ``batch_rows`` rows (records and skips alike).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
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

#: part of every part's key: a change to what a row becomes changes it, so a resume never joins
#: parts of two versions of the rules
PARTS_FORMAT = 2
#: the files an import writes into its folder
OUTPUTS = ("records.parquet", "skipped.parquet", "stats.json")
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

    def __init__(self, records: Path, skipped: Path, name: str) -> None:
        self.records_path, self.skipped_path = records, skipped
        self.records = pq.ParquetWriter(records, RECORDS)
        self.skipped = pq.ParquetWriter(skipped, SKIPPED)
        self.name = name
        self.buffer: list[list[Any]] = []
        self.skips: list[list[Any]] = []
        self.written = 0
        self.counts: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()

    def flush(self) -> None:
        if self.buffer:
            df = pd.DataFrame(self.buffer, columns=RECORDS.names)
            df.index = pd.RangeIndex(self.written, self.written + len(df))  # errors name the output row
            validate(df, RecordSchema, source=f"records of {self.name}")
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
        empty = [n for n, t in (("passage", passage), ("question", question), ("answer", answer))
                 if not t.strip() and (n != "passage" or kind.type != "ir")]  # fmt: skip
        reason = f"empty {empty[0]}" if empty else ""
        if reason:
            skipped.append((pair, reason))
            continue
        chat = record_chat(system, user_turn(kind.type, question, passage), answer)
        # a null id ties nothing: the row is a unit of its own (never one with every other null)
        tie = ("\x00row", path.name, index) if row[kind.unit] is None else (row[kind.unit],)
        unit = _hash(kind.name, split, stage, *tie, *([passage] if passage else []))
        kept.append((pair, [record_id(source, path, index, pair), unit, stage, iid, meta["skill"],
                            meta["subskill"], meta["indicator"], kind.type, split, chat]))  # fmt: skip
    return kept, skipped


def record_id(source: Source, path: Path, row: int, pair: int) -> str:
    """The id of a source row's ``pair``-th question: content-free, so known before the row is read."""
    return _hash(source.folder.name, source.kind.name, path.name, row, pair)


def _part(
    source: Source, path: Path, split: str, work: Path, bar: tqdm[Any], *, system: str, batch_rows: int
) -> dict[str, Any]:
    """One data file imported into ``work`` as ``<key>.records.parquet`` and ``<key>.skipped.parquet``,
    then ``<key>.json`` (its counts), written last: a file whose json is there is done, and a
    rerun reuses it. ``key`` hashes what the file's records depend on: the folder's name and kind,
    the file's name, size and modification time, and the system turn."""
    stat = path.stat()
    key = _hash(PARTS_FORMAT, source.folder.name, source.kind.name, path.name, stat.st_size, stat.st_mtime_ns,
                system)  # fmt: skip
    done = work / f"{key}.json"
    part = _finished(work, key)
    if part is not None:
        bar.update(part["rows"])
        return {**part, "folder": str(source.folder)}  # as this run names it
    name = f"{source.folder.name}/data/{path.name}"
    writer = _Writer(work / f"{key}.records.parquet", work / f"{key}.skipped.parquet", name)
    read = 0
    try:
        for index, row in rows(path, source.kind, batch_rows=batch_rows):
            read += 1
            bar.update()
            kept, skipped = row_records(source, path, split, index, row, system=system)
            for pair, reason in skipped:
                writer.skip(name, index, pair, reason)
            for _, record in kept:
                writer.buffer.append(record)
                writer.counts[f"{record[2]}/{record[7]}/{split}"] += 1
            if len(writer.buffer) >= batch_rows or len(writer.skips) >= batch_rows:
                writer.flush()
    except BaseException:
        writer.close(flush=False)  # the first error is the one to report
        for half in (writer.records_path, writer.skipped_path):  # never reused: no json says it is done
            half.unlink(missing_ok=True)
        raise
    writer.close()
    part = {"key": key, "folder": str(source.folder), "rows": read, "records": writer.written,
            "counts": dict(writer.counts), "skipped": dict(writer.reasons)}  # fmt: skip
    write_json(done, part)
    return part


def _finished(work: Path, key: str) -> dict[str, Any] | None:
    """A finished part's counts; None when there is none, or its files do not hold what its json
    says (torn by a power loss: the file is imported again)."""
    try:
        part: dict[str, Any] = json.loads((work / f"{key}.json").read_text(encoding="utf-8"))
        for name, n in (("records", part["records"]), ("skipped", sum(part["skipped"].values()))):
            if pq.ParquetFile(work / f"{key}.{name}.parquet").metadata.num_rows != n:
                return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, pa.ArrowException):
        return None
    return part


@contextmanager
def _only_import(work: Path, out: Path) -> Iterator[None]:
    """The work folder, created and locked (``flock``, dropped by the kernel when the process
    ends): a second import into the same ``out`` is refused rather than mixing its parts."""
    work.mkdir(exist_ok=True)
    fd = os.open(work, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CurllError(f"another import into it is running (its parts: {work})", file=out,
                             field="--out") from None  # fmt: skip
        yield
    finally:
        os.close(fd)


def _check_out(out: Path, sources: Sequence[Source]) -> None:
    """``out`` is replaced whole, so it must not hold a repository being read, nor anything but
    an earlier import's files."""
    for source in sources:
        folder = source.folder.resolve()
        inside = [p for p, _ in source.files if p.resolve().is_relative_to(out)]
        if folder.is_relative_to(out) or inside:
            raise CurllError(f"would replace {folder}, a repository being imported: name a folder of "
                             "its own for the import", file=out, field="--out")  # fmt: skip
    if out.is_dir():
        foreign = sorted(p.name for p in out.iterdir() if p.name not in OUTPUTS)
        if foreign:
            listed = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            raise CurllError(f"holds files an import did not write ({listed}) and would be replaced "
                             "whole: name a new or empty folder", file=out, field="--out")  # fmt: skip


def _concat(parts: Sequence[Path], out: Path, schema: pa.Schema) -> None:
    """The parts' row groups, in order, as one parquet file."""
    with pq.ParquetWriter(out, schema) as writer:
        for path in parts:
            file = pq.ParquetFile(path)
            for group in range(file.num_row_groups):
                writer.write_table(file.read_row_group(group))


def import_release(
    sources: Sequence[tuple[Path, str | None]],
    out: str | Path,
    *,
    system: str = "",
    batch_rows: int = 8192,
) -> dict[str, Any]:
    """Import ``sources`` ((folder, kind or None), :func:`curll.imports.reader.parse_source`) into
    ``out`` (layout above); returns the stats. Every source is checked before any row is read;
    bad input is a CurllError naming the file, row and column, and leaves ``out`` as it was.

    Resumable: each data file is imported into ``.<out>.import/`` beside ``out`` (:func:`_part`),
    so a rerun after a crash or a kill reads only the files not yet done; the parts are joined
    into ``out`` and the folder removed at the end. ``out`` must be new, empty or an earlier
    import's, and hold no repository being read (:func:`_check_out`)."""
    opened = [open_source(folder, kind) for folder, kind in sources]
    seen: dict[str, Path] = {}
    for source in opened:  # record ids hash the folder's name: two of one name would collide
        if source.folder.name in seen:
            first = seen[source.folder.name]
            raise CurllError(f"a second folder named {source.folder.name!r} (the first: {first}): "
                             "pass each repository once", file=source.folder)  # fmt: skip
        seen[source.folder.name] = source.folder
    target = Path(out).resolve()
    _check_out(target, opened)
    work = target.with_name(f".{target.name}.import")
    with atomic_dir(target) as tmp, _only_import(work, target):  # atomic_dir first: out can be written
        total = sum(pq.ParquetFile(path).metadata.num_rows for s in opened for path, _ in s.files)
        # shown after a second: bad input found in the first rows is its one error line alone
        with tqdm(total=total, desc="release import", unit="row", delay=1.0) as bar:
            parts = [_part(source, path, split, work, bar, system=system, batch_rows=batch_rows)
                     for source in opened for path, split in source.files]  # fmt: skip
        written = sum(p["records"] for p in parts)
        reasons: Counter[str] = Counter()
        counts: Counter[str] = Counter()
        read: Counter[str] = Counter()
        for p in parts:
            reasons.update(p["skipped"])
            counts.update(p["counts"])
            read[p["folder"]] += p["rows"]
        if written == 0:
            shutil.rmtree(work, ignore_errors=True)
            why = ", ".join(f"{r} {n}" for r, n in reasons.most_common()) or "no rows"
            folders = ", ".join(str(source.folder) for source in opened)
            raise CurllError(f"the import kept no records ({why})", file=folders)
        _concat([work / f"{p['key']}.records.parquet" for p in parts], tmp / "records.parquet", RECORDS)
        _concat([work / f"{p['key']}.skipped.parquet" for p in parts], tmp / "skipped.parquet", SKIPPED)
        key = {f"{s}/{t}/{p}": (int(s), t, p) for s, t, p in (k.split("/") for k in counts)}
        stats = {
            "records": written,
            "by_stage_type_split": {k: counts[k] for k in sorted(counts, key=key.__getitem__)},
            "rows_read": dict(read),
            "skipped": dict(sorted(reasons.items())),
        }
        write_json(tmp / "stats.json", stats)
        shutil.rmtree(work, ignore_errors=True)  # under the lock; out is swapped in as the block ends
    return stats
