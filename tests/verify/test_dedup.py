"""Exact and semantic dedup on real text with the real distilled encoder."""

from __future__ import annotations

import pytest

from curll.verify.dedup import (
    CrossIndex,
    ExactIndex,
    exact_duplicates,
    near_duplicates,
    normalise,
)
from tests.verify.conftest import PASSAGES

COPY = PASSAGES[0].replace("small brown puppy", "little brown puppy")
PARAPHRASE = (
    "Under the park bench, Mia discovered a tiny brown puppy. Because it was shaking with cold, she "
    "wrapped it in her red scarf and took it home, where her dad gave it warm milk. Soon the puppy "
    "wagged its tail and licked her hand."
)


def test_normalise_ignores_case_punctuation_and_spacing():
    assert normalise("  Hello,   World! ") == normalise("hello world") == "hello world"


def test_a_copy_typed_with_decomposed_accents_or_zero_width_characters_is_an_exact_duplicate():
    import unicodedata

    text = "Zo\u00eb's caf\u00e9 na\u00efve r\u00e9sum\u00e9 is open."
    nfd = unicodedata.normalize("NFD", text)
    hidden = text.replace("caf", "ca\u200bf").replace("open", "op\ufeffen")
    assert nfd != text and normalise(nfd) == normalise(text) == normalise(hidden)
    assert exact_duplicates(["a", "b", "c"], [text, nfd, hidden]) == {"b": "a", "c": "a"}
    index = ExactIndex()
    assert index.add(["a"], [text]) == {} and index.add(["b", "c"], [nfd, hidden]) == {"b": "a", "c": "a"}


def test_texts_that_display_alike_normalise_alike():
    """A soft hyphen or direction mark inside a word, fullwidth letters, a ligature and ``_``
    (a word character to a regex) show as the plain text: one text to exact dedup."""
    plain = normalise("The cat sat on the mat.")
    shown = ["The c\u00adat sat on the mat.", "The c\u200fat sat on the mat.",
             "\uff34\uff48\uff45 cat sat on the mat.", "The cat sat on the mat_"]  # fmt: skip
    for text in shown:
        assert normalise(text) == plain, text
    assert normalise("a \ufb01sh") == "a fish"
    assert normalise("What is 3\u00b2?") != normalise("What is 32?")  # a square is no other number


def test_exact_duplicates_keep_the_first_and_point_to_it():
    texts = ["A cat sat.", "a CAT   sat", "A dog ran.", "A cat sat!"]
    assert exact_duplicates(["a", "b", "c", "d"], texts) == {"b": "a", "d": "a"}


def test_planted_copy_and_paraphrase_are_caught_and_distinct_passages_are_not(encoder):
    texts = [*PASSAGES, COPY, PARAPHRASE]
    ids = [f"p{i}" for i in range(len(texts))]
    dups = near_duplicates(ids, encoder.encode(texts), threshold=0.95)
    assert {d.id: d.of for d in dups} == {"p5": "p0", "p6": "p0"}
    assert all(0.95 <= d.score <= 1.0 + 1e-6 for d in dups)


def test_threshold_is_respected(encoder):
    texts = [PASSAGES[0], PARAPHRASE]
    vectors = encoder.encode(texts)
    cos = float(vectors[0] @ vectors[1])
    assert near_duplicates(["a", "b"], vectors, threshold=min(cos + 0.005, 1.0)) == []
    assert len(near_duplicates(["a", "b"], vectors, threshold=cos - 0.005)) == 1


def test_cross_rate_is_the_share_of_b_repeating_a(encoder):
    a = PASSAGES[:3]
    b = [COPY, PARAPHRASE, PASSAGES[3], PASSAGES[4]]
    rate = CrossIndex(encoder.encode(a)).rate(encoder.encode(b), threshold=0.95)
    assert rate == 0.5
    assert CrossIndex(encoder.encode(a)).rate(encoder.encode(a)[:0], threshold=0.95) == 0.0


def test_one_cross_index_answers_for_every_later_stage_as_a_fresh_one_would(encoder):
    """verify builds the index of an earlier stage once and asks it about each later stage:
    asking changes nothing in it (each answer equals a fresh index's)."""
    a, later = (
        encoder.encode(PASSAGES[:3]),
        [[COPY, PASSAGES[3]], [PARAPHRASE, COPY, PASSAGES[4]], [PASSAGES[4]]],
    )
    once = CrossIndex(a)
    got = [once.rate(encoder.encode(b), threshold=0.95) for b in later]
    assert got == [CrossIndex(a).rate(encoder.encode(b), threshold=0.95) for b in later] == [0.5, 2 / 3, 0.0]
    assert CrossIndex(a[:0]).rate(a, threshold=0.95) == 0.0


def test_auto_index_is_exact_for_small_inputs_and_usearch_for_large():
    from curll.verify.dedup import choose_index

    assert choose_index("auto", 50_000, 50_000) == "exact"
    assert choose_index("auto", 50_001, 50_000) == "usearch"
    assert choose_index("exact", 10**6, 50_000) == "exact" and choose_index("usearch", 3, 50_000) == "usearch"


def test_the_approximate_index_finds_the_exact_ones_duplicates(encoder):
    """On planted near-copies, usearch flags at least 95% of what brute force flags."""
    from curll.verify.dedup import near_duplicates
    from harness.corpus import corpus

    texts = list(dict.fromkeys(corpus(3000, planted=0.2)))
    ids = [str(i) for i in range(len(texts))]
    vectors = encoder.encode(texts)
    exact = {d.id for d in near_duplicates(ids, vectors, threshold=0.9, index="exact")}
    approx = {d.id for d in near_duplicates(ids, vectors, threshold=0.9, index="usearch")}
    assert len(exact) > 100 and len(approx & exact) >= 0.95 * len(exact)


def test_exact_index_remembers_earlier_batches():
    index = ExactIndex()
    assert index.add(["a", "b"], ["A cat sat.", "A dog ran."]) == {}
    assert index.add(["c", "d", "e"], ["a cat sat", "A bird sang.", "a DOG ran!"]) == {"c": "a", "e": "b"}


def test_near_duplicates_need_unique_ids(encoder):
    vectors = encoder.encode(PASSAGES[:2])
    with pytest.raises(ValueError, match="unique"):
        near_duplicates(["a", "a"], vectors, threshold=0.9)
