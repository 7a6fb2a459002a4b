"""Diversity (1/gzip ratio) and readability (textstat in worker processes)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import textstat

from curll.verify.diversity import diversity, sample_indices
from curll.verify.readability import METRICS, score, summarise
from tests.verify.conftest import PASSAGES


def test_diversity_is_compressed_over_raw_size():
    raw = "\n".join(PASSAGES).encode()
    assert diversity(PASSAGES) == pytest.approx(len(gzip.compress(raw, 9, mtime=0)) / len(raw))
    assert diversity(PASSAGES[:1] * 20) < diversity(PASSAGES) < 1.0
    assert diversity([]) == 0.0


def test_sample_is_seeded_and_sorted():
    a = sample_indices(100, 10, seed=1)
    assert list(a) == sorted(a) and len(set(a)) == 10
    assert list(a) == list(sample_indices(100, 10, seed=1)) != list(sample_indices(100, 10, seed=2))
    assert list(sample_indices(5, 10, seed=1)) == [0, 1, 2, 3, 4]


def test_scores_match_textstat_and_workers_give_identical_values():
    texts = PASSAGES * 120 + [""]  # 601 texts: several chunks for the pool
    one = score(texts, workers=1)
    two = score(texts, workers=2, chunk=50)
    assert one.shape == (601, len(METRICS))
    assert np.array_equal(one, two)
    assert one[0, 0] == textstat.flesch_kincaid_grade(PASSAGES[0])
    assert one[0, 4] == textstat.dale_chall_readability_score(PASSAGES[0])
    assert (one[-1] == 0).all()  # a blank text scores zeros


def test_summarise_gives_mean_and_population_std():
    s = summarise(np.array([[1.0] * 6, [3.0] * 6]))
    assert s["smog"] == {"mean": 2.0, "std": 1.0}
    assert summarise(np.zeros((0, 6)))["gunning_fog"] == {"mean": 0.0, "std": 0.0}
