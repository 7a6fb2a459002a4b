"""Exact and semantic deduplication.

- :func:`normalise` / :func:`exact_duplicates` / :class:`ExactIndex`: texts equal after
  composing accents (NFC), dropping zero-width characters, lower-casing, dropping punctuation
  and collapsing white space are duplicates; the first
  occurrence is kept (the index remembers 16 bytes of a hash per distinct text, not the text).
- :func:`near_duplicates`: self-deduplication of precomputed embeddings, greedy in input order:
  a row is flagged when its cosine with an earlier kept row is >= threshold (the first of each
  group is kept, so the result depends only on the input order). Rows are known by their ids:
  the texts themselves are not needed (nor held).
- :class:`CrossIndex` (built once on ``a``): the share of the vectors ``b`` with a
  near-duplicate among ``a``.
- :func:`choose_index`: ``auto`` picks the exact index for small inputs, usearch for large.

Embeddings are passed in (one encoding per text for all the comparisons of a run). The index
is vicinity's (``basic``: brute force, exact; ``usearch``: approximate), the library semhash
searches with, used directly: semhash 0.5 takes precomputed vectors for the rows it indexes
(``SemHash.from_embeddings``, which still asks for an encoder) but encodes the rows it is asked
about (``deduplicate`` has no way to take their vectors), so the cross-stage rates would need a
stand-in encoder. The algorithm is semhash 0.5's (``self_deduplicate``, ``deduplicate``): the
index proposes neighbours (100 a row, 1000 for rows that fill them), every candidate is
rescored with an exact cosine, and the same rows are flagged with the same scores.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from curll.text import canonical

if TYPE_CHECKING:
    from vicinity.backends import AbstractBackend

_PUNCT = re.compile(r"(?:[^\w\s]|_)+")
_WIDE = re.compile("[\uff01-\uff5e\ufb00-\ufb06]")  # fullwidth ASCII, Latin ligatures
_SPACE = re.compile(r"\s+")

Index = Literal["exact", "usearch"]


def choose_index(setting: Literal["auto", "exact", "usearch"], n: int, auto_above: int) -> Index:
    """The index for ``n`` texts: ``auto`` is exact (brute force, quadratic) up to ``auto_above``
    texts and usearch (approximate) above, where brute force stops being affordable."""
    if setting != "auto":
        return setting
    return "usearch" if n > auto_above else "exact"


def normalise(text: str) -> str:
    """The text exact dedup and decontamination compare: :func:`curll.text.canonical` (no
    invisible characters), fullwidth forms and Latin ligatures folded to their letters (not
    superscripts: 3 squared is not 32), lower case, punctuation (and ``_``) as space, runs of
    space as one."""
    folded = _WIDE.sub(lambda m: unicodedata.normalize("NFKC", m.group()), canonical(text)).lower()
    return _SPACE.sub(" ", _PUNCT.sub(" ", folded)).strip()


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


_NEIGHBOURS = 100  # neighbours asked per row, then _MORE for the rows that fill them (semhash's)
_MORE = 1000


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; a zero row stays zero (similar to nothing)."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def _build(vectors: np.ndarray, index: Index) -> AbstractBackend[Any]:
    """vicinity's cosine backend over ``vectors``: ``basic`` (brute force) or ``usearch``."""
    from vicinity.backends import get_backend_class

    backend = get_backend_class("basic" if index == "exact" else "usearch")
    return backend.from_vectors(vectors, **backend.argument_class().dict())


def _neighbours(
    backend: AbstractBackend[Any], queries: np.ndarray, threshold: float
) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each query, the rows of the index the backend puts at cosine >= ``threshold`` (its own
    scores), as (row numbers, scores); a query that fills _NEIGHBOURS is asked again for _MORE."""
    found = [(rows, 1 - dist) for rows, dist in backend.threshold(queries, 1 - threshold, max_k=_NEIGHBOURS)]
    if full := [i for i, (rows, _) in enumerate(found) if len(rows) >= _NEIGHBOURS]:
        again = backend.threshold(queries[full], 1 - threshold, max_k=_MORE)
        for i, (rows, dist) in zip(full, again, strict=True):
            found[i] = (rows, 1 - dist)
    return found


def _closest(unit: np.ndarray, i: int, rows: np.ndarray, threshold: float) -> tuple[int, float] | None:
    """The row among ``rows`` with the highest exact cosine to row ``i``, if >= threshold."""
    if not len(rows):
        return None
    scores = unit[rows] @ unit[i]
    best = int(np.argmax(scores))
    return (int(rows[best]), float(scores[best])) if scores[best] >= threshold else None


def near_duplicates(
    ids: Sequence[str], vectors: np.ndarray, *, threshold: float, index: Index = "exact"
) -> list[Duplicate]:
    """Rows (after the first of each near-duplicate group) with cosine >= threshold to a kept row.

    Greedy in input order: row i is flagged, as a duplicate of the kept row with the highest
    cosine, when that cosine is >= threshold; else it is kept. Only kept rows count (a row close
    to a flagged row alone is kept). Candidates are the kept rows the index finds near row i
    and the kept rows the flagged ones it finds are duplicates of; every cosine is rescored
    exactly. ``ids`` must be unique; remove exact duplicates first (they would all be flagged
    here too, with a score of 1, but under the other reason).
    """
    if len(ids) < 2:
        return []
    if len(set(ids)) < len(ids):
        raise ValueError("near_duplicates: ids must be unique")
    unit = _unit(vectors)
    of = np.empty(len(ids), dtype=np.int64)  # the kept row each row stands for (itself if kept)
    kept: list[int] = []
    dups: list[Duplicate] = []
    for i, (rows, scores) in enumerate(_neighbours(_build(vectors, index), vectors, threshold)):
        near = rows[scores >= threshold]
        best = _closest(unit, i, np.unique(of[near[near < i]]), threshold)
        if best is None and len(near) >= _MORE:  # the neighbours may be cut: ask every kept row
            best = _closest(unit, i, np.asarray(kept, dtype=np.int64), threshold)
        if best is None:
            kept.append(i)
            of[i] = i
        else:
            of[i] = best[0]
            dups.append(Duplicate(ids[i], ids[best[0]], best[1]))
    return dups


class CrossIndex:
    """An index over the rows of ``a`` (unit vectors), built once, asked about several ``b``."""

    def __init__(self, a: np.ndarray, index: Index = "exact") -> None:
        self._a = _unit(a)  # once, not for every row of every b asked
        self._backend = _build(a, index) if len(a) else None

    def rate(self, b: np.ndarray, *, threshold: float) -> float:
        """Share of the rows of ``b`` with cosine >= threshold to some row of ``a`` (the rows the
        index finds, rescored exactly)."""
        if self._backend is None or not len(b):
            return 0.0
        hits = 0
        for row, (rows, _) in zip(b, _neighbours(self._backend, b, threshold), strict=True):
            if len(rows) and (self._a[rows] @ _unit(row)).max() >= threshold:
                hits += 1
        return hits / len(b)
