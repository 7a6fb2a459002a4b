"""The split stage's texts on disk: a temporary SQLite database, so that memory holds ids, not
the verified tables.

:class:`Workspace` loads the verified passages, IR pairs and QA pairs (streamed, a batch at a
time) and answers the lookups the stage makes: a unit's content (what the rater and the
decontamination read: a passage with its CQA and CSQA pairs, or an IR pair) and a passage's
text (the prompt of its QA records). :meth:`Workspace.sorted_records` sorts the chat records
on disk (SQLite's external sort) and yields them in chunks. The file is deleted on close.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import pandas as pd

from curll.split.units import QA_TITLES, ir_content, passage_content

_TABLES = """
CREATE TABLE passages (id TEXT PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE ir (id TEXT PRIMARY KEY, instruction TEXT NOT NULL, response TEXT NOT NULL);
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

    def add_passages(self, chunks: Iterable[pd.DataFrame]) -> None:
        for df in chunks:
            self._db.executemany(
                "INSERT INTO passages VALUES (?, ?)", zip(df["instance_id"], df["text"], strict=True)
            )

    def add_ir(self, chunks: Iterable[pd.DataFrame]) -> None:
        for df in chunks:
            rows = zip(
                df["instance_id"].tolist(), df["instruction"].tolist(), df["response"].tolist(), strict=True
            )
            self._db.executemany("INSERT INTO ir VALUES (?, ?, ?)", rows)

    def add_qa(self, kind: str, chunks: Iterable[pd.DataFrame]) -> None:
        for df in chunks:
            rows = zip(
                df["context_id"], [kind] * len(df), df["q_index"], df["question"], df["answer"], strict=True
            )
            self._db.executemany("INSERT INTO qa VALUES (?, ?, ?, ?, ?)", rows)
        self._db.execute("CREATE INDEX IF NOT EXISTS qa_by_context ON qa (context_id, kind, q_index)")

    def qa_counts(self) -> Iterator[tuple[str, str, int]]:
        """(context_id, kind, pairs) for every passage with QA pairs added."""
        query = (
            "SELECT context_id, kind, COUNT(*) FROM qa GROUP BY context_id, kind ORDER BY context_id, kind"
        )
        for context_id, kind, n in self._db.execute(query):
            yield str(context_id), str(kind), int(n)

    def passage(self, context_id: str) -> str:
        row = self._db.execute("SELECT text FROM passages WHERE id = ?", (context_id,)).fetchone()
        return "" if row is None else str(row[0])

    def content(self, unit_id: str, kind: str) -> str:
        """A unit's text: the passage and its QA blocks, or "Instruction: ...\\nResponse: ..."."""
        if kind == "ir":
            instruction, response = self._db.execute(
                "SELECT instruction, response FROM ir WHERE id = ?", (unit_id,)
            ).fetchone()
            return ir_content(instruction, response)
        pairs = {
            qa_kind: self._db.execute(
                "SELECT question, answer FROM qa WHERE context_id = ? AND kind = ? ORDER BY q_index",
                (unit_id, qa_kind),
            ).fetchall()
            for qa_kind, _ in QA_TITLES
        }
        return passage_content(self.passage(unit_id), pairs)

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
        """The records added, by (stage, split, type, record_id), ``chunk_rows`` at a time."""
        if self._columns is None:
            return
        cursor = self._db.execute("SELECT * FROM records ORDER BY stage, split, type, record_id")
        while batch := cursor.fetchmany(chunk_rows):
            yield pd.DataFrame(batch, columns=self._columns)

    def close(self) -> None:
        self._db.close()
        self._dir.cleanup()
