"""Exact and semantic deduplication.

- :func:`normalise` / :func:`exact_duplicates`: texts equal after lower-casing, dropping
  punctuation and collapsing white space are duplicates; the first occurrence is kept.
- :func:`near_duplicates`: semhash's self-deduplication on precomputed, unit-length embeddings:
  a text is flagged when its cosine with an earlier kept text is >= threshold (semhash keeps
  the first of each group, so the result depends only on the input order).
- :func:`cross_rate`: the share of texts in ``b`` with a near-duplicate in ``a``.
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


def text_hash(text: str) -> str:
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def exact_duplicates(ids: Sequence[str], texts: Sequence[str]) -> dict[str, str]:
    """{id of a repeat: id of the first row with the same normalised text}."""
    first: dict[str, str] = {}
    dups: dict[str, str] = {}
    for i, text in zip(ids, texts, strict=True):
        key = text_hash(text)
        if key in first:
            dups[i] = first[key]
        else:
            first[key] = i
    return dups


@dataclass(frozen=True)
class Duplicate:
    """``id`` is a near-duplicate of ``of`` with cosine ``score``."""

    id: str
    of: str
    score: float


class _Lookup:
    """An Encoder for semhash that returns precomputed vectors (semhash re-encodes queries)."""

    def __init__(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        self.table = dict(zip(texts, vectors, strict=True))

    def encode(self, inputs: Sequence[str], **kwargs: Any) -> np.ndarray:
        return np.stack([self.table[t] for t in inputs])


def _semhash(ids: Sequence[str], texts: Sequence[str], vectors: np.ndarray, index: Index) -> Any:
    from semhash import SemHash

    records = [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)]
    backend = "basic" if index == "exact" else "usearch"
    return SemHash.from_embeddings(
        vectors, records, model=_Lookup(texts, vectors), columns=["text"], ann_backend=backend
    )


def near_duplicates(
    ids: Sequence[str], texts: Sequence[str], vectors: np.ndarray, *, threshold: float, index: Index = "exact"
) -> list[Duplicate]:
    """Rows (after the first of each near-duplicate group) with cosine >= threshold to a kept row.

    Texts must be unique (remove exact duplicates first): semhash groups identical texts.
    """
    if len(ids) < 2:
        return []
    result = _semhash(ids, texts, vectors, index).self_deduplicate(threshold=threshold)
    return [Duplicate(d.record["id"], d.duplicate_of["id"], float(d.score)) for d in result.filtered]


def cross_rate(
    a: tuple[Sequence[str], np.ndarray],
    b: tuple[Sequence[str], np.ndarray],
    *,
    threshold: float,
    index: Index = "exact",
) -> float:
    """Share of ``b``'s texts with cosine >= threshold (or an exact match) to some text of ``a``."""
    (texts_a, vec_a), (texts_b, vec_b) = a, b
    if not len(texts_a) or not len(texts_b):
        return 0.0
    sem = _semhash([str(i) for i in range(len(texts_a))], texts_a, vec_a, index)
    sem.model = _Lookup(texts_b, vec_b)
    records = [{"id": f"b{i}", "text": t} for i, t in enumerate(texts_b)]
    result = sem.deduplicate(records, threshold=threshold)
    return len(result.filtered) / len(texts_b)
