"""near_duplicates and CrossIndex against a brute-force numpy reference written here: random
unit vectors with planted near-copies (and copies of copies), thresholds at the edge (half way
between two neighbouring pair cosines, so moving one a little flips a pair)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from curll.verify.dedup import CrossIndex, near_duplicates


def _unit(x: np.ndarray) -> np.ndarray:
    unit: np.ndarray = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    return unit


def planted(seed: int, n: int = 400, dims: int = 16, copies: float = 0.4) -> np.ndarray:
    """``n`` unit vectors; a share ``copies`` are noisy copies of an earlier row (itself maybe a
    copy), at random places and noise levels, so groups, chains and near misses all occur."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dims))
    for i in sorted(rng.choice(np.arange(1, n), size=int(copies * n), replace=False)):
        j = rng.integers(i)
        noise = rng.uniform(0.02, 0.5) * rng.standard_normal(dims) / np.sqrt(dims)
        x[i] = x[j] / np.linalg.norm(x[j]) + noise
    return _unit(x)


def greedy(x: np.ndarray, threshold: float) -> list[tuple[int, int, float]]:
    """(row, kept row, cosine): rows in order, each compared with every earlier KEPT row."""
    v = x.astype(np.float64)
    kept: list[int] = []
    out: list[tuple[int, int, float]] = []
    for i in range(len(v)):
        sims = v[kept] @ v[i]
        if len(kept) and sims.max() >= threshold:
            out.append((i, kept[int(np.argmax(sims))], float(sims.max())))
        else:
            kept.append(i)
    return out


def share_near(a: np.ndarray, b: np.ndarray, threshold: float) -> float:
    return float(((b.astype(np.float64) @ a.astype(np.float64).T).max(axis=1) >= threshold).mean())


def edges(sims: np.ndarray, low: float, count: int = 6) -> list[float]:
    """Thresholds half way between neighbouring distinct cosines above ``low`` (gaps > 1e-4, far
    above float32 rounding), spread over that range."""
    v = np.unique(sims[sims > low])
    gaps = np.flatnonzero(np.diff(v) > 1e-4)
    picks = gaps[np.linspace(0, len(gaps) - 1, count).astype(int)]
    return [float((v[k] + v[k + 1]) / 2) for k in picks]


def ids_of(n: int) -> list[str]:
    return [f"r{i}" for i in range(n)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_index_flags_what_brute_force_flags(seed):
    x = planted(seed)
    g = x.astype(np.float64) @ x.astype(np.float64).T
    counts = []
    for t in edges(g[np.triu_indices(len(x), 1)], 0.5):
        want = greedy(x, t)
        got = near_duplicates(ids_of(len(x)), x, threshold=t, index="exact")
        assert [(d.id, d.of) for d in got] == [(f"r{i}", f"r{k}") for i, k, _ in want]
        assert [d.score for d in got] == pytest.approx([s for *_, s in want], abs=1e-5)
        counts.append(len(want))
    assert max(counts) > 50 and len(set(counts)) == len(counts)  # every threshold cuts elsewhere


def test_only_kept_rows_count():
    """b is a copy of a, c is close to b but not to a: c is kept (b was dropped)."""
    angles = np.radians([0.0, 20.0, 40.0])
    x = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    t = float(np.cos(np.radians(25.0)))
    assert [(d.id, d.of) for d in near_duplicates(["a", "b", "c"], x, threshold=t)] == [("b", "a")]
    ((row, of, score),) = greedy(x, t)
    assert (row, of) == (1, 0) and score == pytest.approx(np.cos(np.radians(20.0)))


def test_a_cosine_equal_to_the_threshold_is_a_duplicate():
    x = planted(3, n=2, copies=0.5)
    (dup,) = near_duplicates(["a", "b"], x, threshold=0.0)
    assert near_duplicates(["a", "b"], x, threshold=dup.score) == [dup]
    assert near_duplicates(["a", "b"], x, threshold=float(np.nextafter(np.float32(dup.score), 2))) == []


def test_a_dense_group_past_the_neighbour_limit():
    """1,200 rows around one point (more than the 1,000 neighbours asked of the index)."""
    rng = np.random.default_rng(4)
    centre = rng.standard_normal(8)
    x = _unit(np.vstack([centre + 0.3 * rng.standard_normal((1200, 8)), rng.standard_normal((300, 8))]))
    for t in (0.3, 0.9):
        want = greedy(x, t)
        got = near_duplicates(ids_of(len(x)), x, threshold=t)
        assert [(d.id, d.of) for d in got] == [(f"r{i}", f"r{k}") for i, k, _ in want]


@pytest.mark.parametrize("seed", [0, 1])
def test_cross_rate_is_brute_forces_share(seed):
    a, b = planted(seed, n=300), planted(seed + 10, n=200)
    rng = np.random.default_rng(seed)
    noise = rng.uniform(0.0, 0.1, (60, 1)) * rng.standard_normal((60, 16))
    b[:60] = _unit(a[100:160] + noise)  # b repeats some rows of a, a little changed
    index = CrossIndex(a, "exact")
    for t in edges((b.astype(np.float64) @ a.astype(np.float64).T).max(axis=1), 0.4):
        assert index.rate(b, threshold=t) == share_near(a, b, t)
    assert 0 < share_near(a, b, 0.9) < 1


def test_usearch_is_brute_force_on_small_inputs_and_never_wrong():
    """The approximate index may miss a neighbour (keeping a row it should drop) but never
    flags a pair under the threshold nor points at a dropped row; on small inputs it agrees."""
    x = planted(5, n=600)
    for t in (0.6, 0.8, 0.95):
        got = near_duplicates(ids_of(len(x)), x, threshold=t, index="usearch")
        flagged = {d.id for d in got}
        want = {f"r{i}" for i, _, _ in greedy(x, t)}
        assert len(flagged & want) >= 0.95 * len(want)
        for d in got:
            i, k = int(d.id[1:]), int(d.of[1:])
            assert k < i and d.of not in flagged and float(x[i] @ x[k]) >= t - 1e-6
        rate = CrossIndex(x[:300], "usearch").rate(x[300:], threshold=t)
        assert share_near(x[:300], x[300:], t) - 0.02 <= rate <= share_near(x[:300], x[300:], t)


def test_no_semhash_on_the_way(monkeypatch):
    """The vectors go to the index directly: no encoder stands in for semhash's."""
    monkeypatch.setitem(sys.modules, "semhash", None)
    x = planted(6, n=50)
    assert near_duplicates(ids_of(50), x, threshold=0.8) == near_duplicates(ids_of(50), x, threshold=0.8)
    assert CrossIndex(x[:25]).rate(x[25:], threshold=0.8) == share_near(x[:25], x[25:], 0.8)
