"""The verify stage's scratch files: embeddings and kept passages on disk, not in memory.

:class:`VectorFile` appends float32 rows (one batch of texts' embeddings at a time) to a
file, with each row's curriculum stage and id in memory (ids: what the near-duplicate
report names). :meth:`VectorFile.stage` then reads one stage's rows (a memory map: only
the rows asked for are read). The rows of a kind of instance at 1M instances are ~100 MB
(256 float32 dimensions a row); a stage's share is what the semantic index needs at once.

:class:`PassageStore` keeps the kept passages' texts in a SQLite file, looked up by id (the
grounding check of a QA pair reads its passage).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np


class VectorFile:
    """Append-only rows of one dimension, in the order added; ``path`` is a scratch file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.write_bytes(b"")
        self.ids: list[str] = []
        self._stages: list[np.ndarray] = []
        self.dim = 0

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, ids: Sequence[str], stages: np.ndarray, vectors: np.ndarray) -> None:
        """Rows ``vectors`` (n x dim) of the instances ``ids`` in curriculum ``stages``."""
        if not len(ids):
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if self.dim and vectors.shape[1] != self.dim:
            raise ValueError(f"vectors of {vectors.shape[1]} dimensions added to a file of {self.dim}")
        self.dim = vectors.shape[1]
        with self.path.open("ab") as f:
            vectors.tofile(f)
        self.ids.extend(ids)
        self._stages.append(np.asarray(stages, dtype=np.int64))

    def stages(self) -> list[int]:
        return sorted({int(s) for part in self._stages for s in np.unique(part)})

    def positions(self, stage: int) -> np.ndarray:
        """Row numbers of ``stage``'s rows, in the order added."""
        if len(self._stages) != 1:  # the parts added so far, joined once
            self._stages = [np.concatenate(self._stages) if self._stages else np.zeros(0, dtype=np.int64)]
        return np.flatnonzero(self._stages[0] == stage)

    def stage(self, stage: int) -> tuple[list[str], np.ndarray]:
        """(ids, vectors) of ``stage``'s rows, in the order added; the vectors in memory."""
        pos = self.positions(stage)
        if not len(pos):
            return [], np.zeros((0, max(self.dim, 1)), dtype=np.float32)
        table = np.memmap(self.path, dtype=np.float32, mode="r", shape=(len(self), self.dim))
        return [self.ids[i] for i in pos], np.array(table[pos])


class PassageStore:
    """Passage texts by id in a scratch SQLite file (no journal: nothing to recover)."""

    def __init__(self, path: str | Path) -> None:
        self._db = sqlite3.connect(path)
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE IF NOT EXISTS passages (id TEXT PRIMARY KEY, text TEXT NOT NULL)")

    def add(self, ids: Iterable[str], texts: Iterable[str]) -> None:
        self._db.executemany("INSERT INTO passages VALUES (?, ?)", zip(ids, texts, strict=True))

    def get(self, ids: Iterable[str]) -> dict[str, str]:
        """{id: text} of those ``ids`` that are stored."""
        wanted = list(dict.fromkeys(ids))
        out: dict[str, str] = {}
        for start in range(0, len(wanted), 500):  # SQLite's limit on bound parameters
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            out.update(self._db.execute(f"SELECT id, text FROM passages WHERE id IN ({marks})", part))
        return out

    def close(self) -> None:
        self._db.close()
