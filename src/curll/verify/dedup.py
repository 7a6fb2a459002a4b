"""Exact and semantic deduplication.

- :func:`normalise` / :func:`exact_duplicates` / :class:`ExactIndex`: texts equal after
  lower-casing, dropping punctuation and collapsing white space are duplicates; the first
  occurrence is kept (the index remembers 16 bytes of a hash per distinct text, not the text).
- :func:`near_duplicates`: semhash's self-deduplication on precomputed, unit-length embeddings:
  a row is flagged when its cosine with an earlier kept row is >= threshold (semhash keeps
  the first of each group, so the result depends only on the input order). Rows are known by
  their ids: the texts themselves are not needed (nor held).
- :class:`CrossIndex` (built once on ``a``) and :func:`cross_rate`: the share of the vectors ``b``
  with a near-duplicate among ``a``.
- :func:`choose_index`: ``auto`` picks the exact index for small inputs, usearch for large.

Embeddings are passed in (one encoding per text for all the comparisons of a run).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

_PUNCT = re.compile(r"[^\w\s]+")
_SPACE = re.compile(r"\s+")

Index = Literal["exact", "usearch"]


def choose_index(setting: Literal["auto", "exact", "usearch"], n: int, auto_above: int) -> Index:
    """The index for ``n`` texts: ``auto`` is exact (brute force, quadratic) up to ``auto_above``
    texts and usearch (approximate) above, where brute force stops being affordable."""
    if setting != "auto":
        return setting
    return "usearch" if n > auto_above else "exact"


def normalise(text: str) -> str:
    return _SPACE.sub(" ", _PUNCT.sub(" ", text.lower())).strip()


class ExactIndex:
    """Exact duplicates over a stream of batches: :meth:`add` returns {id of a repeat: id of the
    first row with the same normalised text}, counting every earlier batch."""

    def __init__(self) -> None:
        self._first: dict[bytes, str] = {}

    def add(self, ids: Sequence[str], texts: Sequence[str]) -> dict[str, str]:
        dups: dict[str, str] = {}
        for i, text in zip(ids, texts, strict=True):
            key = hashlib.sha256(normalise(text).encode("utf-8")).digest()[:16]
            first = self._first.setdefault(key, i)
            if first != i:
                dups[i] = first
        return dups


def exact_duplicates(ids: Sequence[str], texts: Sequence[str]) -> dict[str, str]:
    """{id of a repeat: id of the first row with the same normalised text}."""
    return ExactIndex().add(ids, texts)


@dataclass(frozen=True)
class Duplicate:
    """``id`` is a near-duplicate of ``of`` with cosine ``score``."""

    id: str
    of: str
    score: float


class _Lookup:
    """An Encoder for semhash that returns precomputed vectors (semhash re-encodes queries);
    a record's "text" is its key."""

    def __init__(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        self.table = dict(zip(keys, vectors, strict=True))

    def encode(self, inputs: Sequence[str], **kwargs: Any) -> np.ndarray:
        return np.stack([self.table[k] for k in inputs])


def _semhash(keys: Sequence[str], vectors: np.ndarray, index: Index) -> Any:
    from semhash import SemHash

    records = [{"text": k} for k in keys]
    backend = "basic" if index == "exact" else "usearch"
    return SemHash.from_embeddings(
        vectors, records, model=_Lookup(keys, vectors), columns=["text"], ann_backend=backend
    )


def near_duplicates(
    ids: Sequence[str], vectors: np.ndarray, *, threshold: float, index: Index = "exact"
) -> list[Duplicate]:
    """Rows (after the first of each near-duplicate group) with cosine >= threshold to a kept row.

    ``ids`` must be unique; remove exact duplicates first (they would all be flagged here too,
    with a score of 1, but under the other reason).
    """
    if len(ids) < 2:
        return []
    if len(set(ids)) < len(ids):
        raise ValueError("near_duplicates: ids must be unique")
    result = _semhash(ids, vectors, index).self_deduplicate(threshold=threshold)
    return [Duplicate(d.record["text"], d.duplicate_of["text"], float(d.score)) for d in result.filtered]


class CrossIndex:
    """An index over the rows of ``a`` (unit vectors), built once, asked about several ``b``."""

    def __init__(self, a: np.ndarray, index: Index = "exact") -> None:
        self._sem = _semhash([f"a{i}" for i in range(len(a))], a, index) if len(a) else None

    def rate(self, b: np.ndarray, *, threshold: float) -> float:
        """Share of the rows of ``b`` with cosine >= threshold to some row of ``a``."""
        if self._sem is None or not len(b):
            return 0.0
        keys = [f"b{i}" for i in range(len(b))]
        self._sem.model = _Lookup(keys, b)  # the rows of b are looked up, not encoded
        result = self._sem.deduplicate([{"text": k} for k in keys], threshold=threshold)
        return len(result.filtered) / len(b)


def cross_rate(a: np.ndarray, b: np.ndarray, *, threshold: float, index: Index = "exact") -> float:
    """Share of the rows of ``b`` with cosine >= threshold to some row of ``a`` (unit vectors)."""
    return CrossIndex(a, index).rate(b, threshold=threshold)
