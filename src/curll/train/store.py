"""Token documents kept on disk, so that packed training data costs memory per document, not
per token.

:class:`DocStore` appends documents (token ids and trained flags) to two anonymous temporary
files (int32 ids, uint8 flags; deleted when the store is closed or collected) and keeps in
memory only each document's offset, length and count of trained targets. :meth:`DocStore.read`
returns one document with ``os.pread`` (no shared file position, no memory map whose pages
would stay resident), so a batch touches only its own documents. A million documents of
~400 tokens take 2 GB on disk and ~24 MB in memory.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence

import numpy as np

_ID = np.dtype(np.int32)  # token ids: vocabularies stay far below 2**31
_FLAG = np.dtype(np.uint8)


class DocStore:
    def __init__(self) -> None:
        self._ids = tempfile.TemporaryFile(prefix="curll-tokens-")  # noqa: SIM115 (closed by close())
        self._flags = tempfile.TemporaryFile(prefix="curll-flags-")  # noqa: SIM115
        self._starts: list[int] = []
        self._lengths: list[int] = []
        self._trained: list[int] = []  # targets with a loss: trained flags of tokens 1..n-1
        self._size = 0
        self._sealed = False

    def __len__(self) -> int:
        return len(self._lengths)

    def append(self, tokens: Sequence[int], trained: Sequence[bool]) -> int:
        """Store one document; returns its id (0, 1, ...)."""
        if self._sealed:
            raise RuntimeError("DocStore: append after the first read")
        ids = np.asarray(tokens, dtype=_ID)
        flags = np.asarray(trained, dtype=_FLAG)
        self._ids.write(ids.tobytes())
        self._flags.write(flags.tobytes())
        self._starts.append(self._size)
        self._lengths.append(len(ids))
        self._trained.append(int(flags[1:].sum()))
        self._size += len(ids)
        return len(self._lengths) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.asarray(self._lengths, dtype=np.int64)

    @property
    def trained_targets(self) -> np.ndarray:
        """Per document, how many of its next-token targets carry a loss."""
        return np.asarray(self._trained, dtype=np.int64)

    def read(self, doc: int) -> tuple[np.ndarray, np.ndarray]:
        """(token ids int64, trained flags bool) of document ``doc``."""
        if not self._sealed:
            self._ids.flush()
            self._flags.flush()
            self._sealed = True
        start, n = self._starts[doc], self._lengths[doc]
        ids = np.frombuffer(os.pread(self._ids.fileno(), n * _ID.itemsize, start * _ID.itemsize), _ID)
        flags = np.frombuffer(os.pread(self._flags.fileno(), n, start), _FLAG)
        return ids.astype(np.int64), flags.astype(bool)

    def close(self) -> None:
        self._ids.close()
        self._flags.close()
