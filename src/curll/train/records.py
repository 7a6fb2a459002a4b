"""One split of ``records.parquet`` for training: ids in memory, messages streamed from disk.

:class:`RecordFile` reads the columns it selects with (``record_id``, ``stage``, ``type``,
``split``, ``unit_id``; validated against :class:`~curll.schemas.RecordSchema`) and keeps the rows of one
split, sorted by record_id, with their row number in the file (``position``). The messages,
nearly all of the file's bytes, are read only by :meth:`RecordFile.messages`, a row group
batch at a time, so memory grows with the number of records, not with their text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from curll.artifacts import read_table
from curll.errors import CurllError
from curll.schemas import RecordSchema

META = ["record_id", "stage", "type", "split", "unit_id"]


class RecordFile:
    def __init__(self, path: str | Path, split: str, *, batch_rows: int = 4096) -> None:
        self.path, self.split, self.batch_rows = Path(path), split, batch_rows
        meta = read_table(self.path, RecordSchema, columns=META)
        meta["position"] = np.arange(len(meta))
        own = meta[meta["split"] == split]
        self.meta = own.sort_values("record_id").reset_index(drop=True)
        self._chars: dict[str, int] | None = None  # unit id -> passage length, read when first asked

    def __len__(self) -> int:
        return len(self.meta)

    def messages(self, positions: np.ndarray) -> Iterator[str]:
        """The ``messages`` of the given file rows, in increasing row order (``positions``
        sorted, no repeats)."""
        wanted = np.asarray(positions, dtype=np.int64)
        if len(wanted) == 0:
            return
        at, i = 0, 0
        for batch in pq.ParquetFile(self.path).iter_batches(batch_size=self.batch_rows, columns=["messages"]):
            end = at + batch.num_rows
            j = int(np.searchsorted(wanted, end))
            if j > i:
                column = batch.column(0)
                for row in wanted[i:j] - at:
                    yield str(column[int(row)].as_py())
                i = j
            at = end
            if i == len(wanted):
                return

    def _passage_texts(self) -> Iterator[tuple[str, str]]:
        """(unit id, passage text) of this split's passage records (a type others are made on:
        its assistant turn is the passage), in file order, read a batch at a time."""
        from curll.chat import turns_of
        from curll.instances import bases

        rows = self.meta[self.meta["type"].isin(bases())].sort_values("position")
        texts = self.messages(rows["position"].to_numpy())
        return ((unit, turns_of(m)[2]) for unit, m in zip(rows["unit_id"], texts, strict=True))

    def passages(self) -> dict[str, str]:
        """unit id -> passage text, of this split's passage records."""
        return dict(self._passage_texts())

    def passage_chars(self, positions: np.ndarray) -> list[int]:
        """For the records at file rows ``positions``, the length in characters of the passage
        their user turn starts with (0 for a type made on none): what
        :func:`curll.train.data.encode` cuts. The passages are read once and kept as lengths, so
        memory grows with the units, not their text. A record of a type made on a passage whose
        unit has no passage record in this split is a CurllError naming it (split keeps a unit
        whole, so the file is not split's)."""
        from curll.instances import TYPES

        if self._chars is None:
            self._chars = {unit: len(text) for unit, text in self._passage_texts()}
        picked = self.meta.set_index("position").loc[positions]
        out = []
        for rid, unit, kind in zip(picked["record_id"], picked["unit_id"], picked["type"], strict=True):
            if TYPES[kind].on and unit not in self._chars:
                raise CurllError(f"record {rid} ({kind}): its unit {unit} has no passage record in the "
                                 f"{self.split} split", file=self.path, field="unit_id")  # fmt: skip
            out.append(self._chars[unit] if TYPES[kind].on else 0)
        return out

    def digest(self) -> str:
        """A hash of this split's record ids and messages, in file order."""
        h = hashlib.sha256()
        positions = np.sort(self.meta["position"].to_numpy())
        ids = self.meta.set_index("position").loc[positions, "record_id"]
        for rid, text in zip(ids, self.messages(positions), strict=True):
            h.update(rid.encode() + b"\0" + text.encode() + b"\0")
        return h.hexdigest()
