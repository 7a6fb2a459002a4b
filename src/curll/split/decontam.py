"""Train/test decontamination by word n-gram overlap.

For a train text u and a test text t,

    overlap(u, t) = |G(u) & G(t)| / min(|G(u)|, |G(t)|),

where G is the set of word n-grams of the normalised text (:func:`curll.verify.dedup.normalise`:
NFC, no invisible characters, fullwidth forms folded, lower case, no punctuation); a text
shorter than n words has one n-gram, itself. Dividing by the smaller set catches both
directions: most of the train text inside a test text, and a test text copied into a longer
train text (a test pair quoted in a train passage). A train text is contaminated when max over t
of overlap(u, t) is >= threshold. An inverted index (n-gram -> test ids) keeps this linear in
the data size.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from curll.verify.dedup import normalise


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = normalise(text).split()
    if len(words) < n:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


@dataclass(frozen=True)
class Contamination:
    """``train_id`` overlaps ``test_id`` (the held-out text it is checked against) by ``overlap``."""

    train_id: str
    test_id: str
    overlap: float


def contaminated(
    train: Mapping[str, str] | Iterable[tuple[str, str]], test: Mapping[str, str], *, n: int, threshold: float
) -> list[Contamination]:
    """Train ids whose overlap with some test text is >= threshold (with the worst test match,
    the first id of equals); ``train`` may be a stream of (id, text) pairs (read once)."""
    index: dict[tuple[str, ...], list[str]] = defaultdict(list)
    sizes: dict[str, int] = {}
    for tid, text in test.items():
        grams = ngrams(text, n)
        sizes[tid] = len(grams)
        for g in grams:
            index[g].append(tid)
    found = []
    for uid, text in train.items() if isinstance(train, Mapping) else train:
        grams = ngrams(text, n)
        if not grams:
            continue
        hits = Counter(tid for g in grams for tid in index.get(g, ()))
        if not hits:
            continue
        share = {tid: count / min(len(grams), sizes[tid]) for tid, count in hits.items()}
        tid = min(share, key=lambda k: (-share[k], k))
        if share[tid] >= threshold:
            found.append(Contamination(uid, tid, round(share[tid], 4)))
    return found
