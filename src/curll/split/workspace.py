"""The split stage's texts on disk: a temporary SQLite database, so that memory holds ids, not
the verified tables.

:class:`Workspace` loads the verified instances (streamed, a batch at a time): those of the
seeded types (:mod:`curll.instances`: passages, IR pairs) by id, and those made on a passage
(CQA and CSQA pairs) by passage. It answers the lookups the stage makes: a unit's content (what
the rater and the decontamination read, :func:`curll.split.units.unit_content`: a passage with
its CQA and CSQA pairs, or an IR pair) and a passage's text (the prompt of its QA records).
:meth:`Workspace.sorted_records` sorts the chat records on disk (SQLite's external sort) and
yields them in chunks. The file is deleted on close.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import pandas as pd

from curll.instances import TYPES, made_on
from curll.schemas.quality import RECORD_ORDER
from curll.split.units import unit_content

_TABLES = """
CREATE TABLE instances (id TEXT PRIMARY KEY, kind TEXT NOT NULL, fields TEXT NOT NULL);
CREATE TABLE qa (context_id TEXT NOT NULL, kind TEXT NOT NULL, q_index INTEGER NOT NULL,
                 question TEXT NOT NULL, answer TEXT NOT NULL);
"""


class Workspace:
    def __init__(self, folder: str | Path | None = None) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="curll-split-", dir=folder)
        self._db = sqlite3.connect(Path(self._dir.name) / "split.sqlite")
        self._db.execute("PRAGMA journal_mode=OFF")  # a scratch file: no crash recovery needed
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.executescript(_TABLES)
        self._columns: list[str] | None = None

    def add(self, kind: str, chunks: Iterable[pd.DataFrame]) -> None:
        """Instances of ``kind`` (its table's columns, or at least ``instance_id`` and its text
        columns; for a type made on a passage, its link, ``q_index``, prompt and reply)."""
        t = TYPES[kind]
        for df in chunks:
            kinds = [kind] * len(df)
            if t.on:
                rows = zip(df[t.link], kinds, df["q_index"], df[t.prompt], df[t.reply], strict=True)
                self._db.executemany("INSERT INTO qa VALUES (?, ?, ?, ?, ?)", rows)
            else:
                values = zip(*(df[c] for c in t.columns), strict=True)
                texts = [json.dumps(dict(zip(t.columns, v, strict=True))) for v in values]
                ids = zip(df["instance_id"], kinds, texts, strict=True)
                self._db.executemany("INSERT INTO instances VALUES (?, ?, ?)", ids)
        if t.on:
            self._db.execute("CREATE INDEX IF NOT EXISTS qa_by_context ON qa (context_id, kind, q_index)")

    def qa_counts(self) -> Iterator[tuple[str, str, int]]:
        """(passage id, kind, items) for every passage with items of a type made on it added."""
        query = (
            "SELECT context_id, kind, COUNT(*) FROM qa GROUP BY context_id, kind ORDER BY context_id, kind"
        )
        for context_id, kind, n in self._db.execute(query):
            yield str(context_id), str(kind), int(n)

    def _fields(self, unit_id: str) -> tuple[str, dict[str, str]] | None:
        row = self._db.execute("SELECT kind, fields FROM instances WHERE id = ?", (unit_id,)).fetchone()
        return None if row is None else (str(row[0]), json.loads(row[1]))

    def passage(self, context_id: str) -> str:
        """The text of a passage (its type's reply column: a passage's text); "" when unknown."""
        found = self._fields(context_id)
        return "" if found is None else found[1][TYPES[found[0]].reply]

    def content(self, unit_id: str, kind: str) -> str:
        """A unit's text (:func:`curll.split.units.unit_content`): the passage and its QA blocks,
        or "Instruction: ...\\nResponse: ..."."""
        found = self._fields(unit_id)
        fields = found[1] if found is not None else dict.fromkeys(TYPES[kind].columns, "")
        blocks = {
            made: self._db.execute(
                "SELECT question, answer FROM qa WHERE context_id = ? AND kind = ? ORDER BY q_index",
                (unit_id, made),
            ).fetchall()
            for made in made_on(kind)
        }
        return unit_content(kind, fields, blocks)

    def add_records(self, df: pd.DataFrame) -> None:
        """Chat records (RecordSchema columns, in that order) to sort."""
        if self._columns is None:
            self._columns = list(df.columns)
            names = ", ".join(f'"{c}"' for c in self._columns)
            self._db.execute(f"CREATE TABLE records ({names})")
        marks = ", ".join("?" * len(self._columns))
        rows = zip(*(df[c].tolist() for c in self._columns), strict=True)
        self._db.executemany(f"INSERT INTO records VALUES ({marks})", rows)

    def sorted_records(self, chunk_rows: int = 4096) -> Iterator[pd.DataFrame]:
        """The records added, in :data:`~curll.schemas.quality.RECORD_ORDER`, ``chunk_rows`` at a time."""
        if self._columns is None:
            return
        cursor = self._db.execute(f"SELECT * FROM records ORDER BY {', '.join(RECORD_ORDER)}")
        while batch := cursor.fetchmany(chunk_rows):
            yield pd.DataFrame(batch, columns=self._columns)

    def close(self) -> None:
        self._db.close()
        self._dir.cleanup()
