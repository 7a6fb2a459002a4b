"""Calibration of the report's statistics on simulated data, and the baselines by hand.

With no true effect at most 5% of runs may claim one (after Holm's correction over a family of
tests); a planted effect must be found; 95% intervals must cover the truth in 93-97% of runs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from curll.evaluate import unigram
from curll.evaluate.cl import cl_batch, cl_metrics
from curll.evaluate.intervals import bootstrap, degrees_of_freedom, holm, inflation, item_weights
from curll.train.data import Doc

STRATA, PER, TESTS = 4, 8, 5  # strata of test items, items in each, tests in a family


def simulated(rng: np.random.Generator, shift: float) -> pd.DataFrame:
    """Items in strata; per item, TESTS paired differences between two models: item difficulty
    cancels, noise sd 1, and test 0 carries ``shift``."""
    n = STRATA * PER
    diffs = rng.normal(0, 1, size=(n, TESTS))
    diffs[:, 0] += shift
    frame = pd.DataFrame(diffs, columns=[f"t{k}" for k in range(TESTS)])
    return frame.assign(item_id=[f"i{k}" for k in range(n)], stage=np.repeat(range(STRATA), PER), type="ir")


def stratified_means(rows: pd.DataFrame, w: np.ndarray) -> dict[str, np.ndarray]:
    """Each test's mean difference: the mean over strata of each stratum's weighted mean."""
    out = {}
    strata = rows["stage"].to_numpy()
    for k in range(TESTS):
        d = rows[f"t{k}"].to_numpy()[:, None]
        per = [(w[strata == s] * d[strata == s]).sum(0) / w[strata == s].sum(0) for s in range(STRATA)]
        out[f"t{k}"] = np.mean(per, axis=0)
    return out


def run_once(seed: int, shift: float, samples: int = 1000):
    rows = simulated(np.random.default_rng(seed), shift)
    weights = {"item_id": item_weights(rows[["item_id", "stage", "type"]], samples, seed=seed)}
    keys = rows[["item_id", "stage", "type"]]
    bounds = bootstrap(
        rows, weights, stratified_means, inflate=inflation(keys, seeds=1), df=degrees_of_freedom(keys)
    )
    adjusted = holm({k: iv.p for k, iv in bounds.items() if iv.p is not None})
    return bounds, adjusted


def test_no_effect_is_claimed_in_at_most_5_percent_of_runs_and_95_percent_intervals_cover_the_truth():
    runs = [run_once(seed, shift=0.0) for seed in range(300)]
    any_claim = np.mean([min(adj.values()) < 0.05 for _, adj in runs])
    uncorrected = np.mean([min(iv.p for iv in b.values() if iv.p is not None) < 0.05 for b, _ in runs])
    covered = np.mean([iv.lo <= 0 <= iv.hi for b, _ in runs for iv in b.values()])
    assert any_claim <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / len(runs)), any_claim  # at most 5%, up to chance
    assert uncorrected > 0.12  # without the correction, five tests claim something far more often
    assert 0.93 <= covered <= 0.97, covered


def test_a_planted_effect_is_found_and_only_there():
    runs = [run_once(1000 + seed, shift=1.0) for seed in range(40)]
    found = np.mean([adj["t0"] < 0.05 for _, adj in runs])
    others = np.mean([adj[f"t{k}"] < 0.05 for _, adj in runs for k in range(1, TESTS)])
    assert found >= 0.9 and others <= 0.05


def test_the_small_sample_factor_widens_intervals_of_tiny_strata_by_sqrt_n_over_n_minus_1():
    items = pd.DataFrame({"item_id": list("abcdefg"), "stage": [0, 0, 1, 1, 1, 2, 3], "type": "ir"})
    assert inflation(items, seeds=1) == pytest.approx(math.sqrt(2))  # the smallest stratum of >1 item: 2
    assert inflation(items, seeds=3) == pytest.approx(math.sqrt(2))
    assert inflation(items.iloc[2:5], seeds=2) == pytest.approx(math.sqrt(2))  # 3 items; 2 seeds
    assert inflation(items.iloc[2:5], seeds=1) == pytest.approx(math.sqrt(1.5))


def test_holm_against_a_hand_computation():
    """p = .01, .04, .03, .005 (m = 4): sorted .005 .01 .03 .04 -> x4 .02, x3 .03, x2 .06, x1 .04 -> .06."""
    got = holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005})
    assert got == pytest.approx({"d": 0.02, "a": 0.03, "c": 0.06, "b": 0.06})


def test_the_unigram_baseline_against_a_hand_computation():
    """Vocabulary 4; trained targets (the tokens after the first whose flag is set): 1, 1, 2.
    Add-one: p = (c + 1) / (3 + 4): p(0) = 1/7, p(1) = 3/7, p(2) = 2/7, p(3) = 1/7. A held-out
    answer with targets 1 and 3 costs -ln(3/7) - ln(1/7) nats over 2 tokens."""
    train = [Doc([0, 1, 1, 2], [False, True, True, True]), Doc([3, 0], [False, False])]
    c = unigram.counts(train, 4)
    assert c.tolist() == [0, 2, 1, 0]
    held = [Doc([2, 0, 1, 3], [False, False, True, True])]
    nll, n = unigram.record_nll(held, unigram.log_probs(c))
    assert n.tolist() == [2] and nll[0] == pytest.approx(-math.log(3 / 7) - math.log(1 / 7))
    none, _ = unigram.record_nll(held, unigram.log_probs(np.zeros(4, dtype=np.int64)))
    assert none[0] == pytest.approx(2 * math.log(4))  # nothing trained: uniform over the vocabulary


def test_the_batched_cl_metrics_equal_the_per_matrix_ones_with_gaps():
    rng = np.random.default_rng(0)
    for _ in range(20):
        m = rng.normal(size=(4, 4))
        m[rng.random((4, 4)) < 0.2] = np.nan
        ind, base = rng.normal(size=4), rng.normal(size=4)
        frame = pd.DataFrame(m, index=pd.Index([1, 2, 3, 5], name="trained_to"), columns=[1, 2, 3, 5])
        diagonal = pd.DataFrame(np.diag(ind), index=frame.index, columns=frame.columns)
        one = cl_metrics(frame, independent=diagonal,
                         untrained=pd.Series(base, index=frame.columns))  # fmt: skip
        batch = cl_batch(np.stack([m, m]), 3, ind_diag=np.stack([ind, ind]), base=np.stack([base, base]))
        for name in ("AP", "FGT", "BWT", "FWT", "FWT_zero_shot"):
            want = one.series[name][-1]
            got = batch[name]
            assert (want is None and np.isnan(got).all()) or got == pytest.approx([want, want], abs=1e-6)
