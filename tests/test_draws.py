"""Seeded draws (curll.draws): independent of row order, stable when one id is added, uniform,
and used by taxonomy's per_stage and evaluate's max_per_type."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from curll.draws import bottom_k, seeded_key
from curll.taxonomy import sample_per_stage


def frame(n: int = 40, groups: int = 3) -> pd.DataFrame:
    return pd.DataFrame({"id": [f"id-{i}" for i in range(n)], "g": [i % groups for i in range(n)]})


def picked(df: pd.DataFrame, k: int, seed: int) -> set[str]:
    return set(df.loc[bottom_k(df, k, seed, key="id", by=["g"]), "id"])


def test_the_key_is_sha256_of_seed_and_id():
    assert seeded_key(7, "abc") == hashlib.sha256(b"7:abc").hexdigest()


def test_a_draw_keeps_k_per_group_and_all_of_a_small_group():
    df = frame(40, 3)
    got = df[bottom_k(df, 4, 1, key="id", by=["g"])]
    assert got.groupby("g").size().tolist() == [4, 4, 4]
    small = frame(5, 3)
    assert bottom_k(small, 4, 1, key="id", by=["g"]).all()


def test_reordering_the_rows_draws_the_same_ids():
    df = frame()
    shuffled = df.sample(frac=1.0, random_state=5).reset_index(drop=True)
    assert picked(df, 3, 11) == picked(shuffled, 3, 11)
    assert picked(df, 3, 11) != picked(df, 3, 12)  # another seed draws otherwise


def test_one_id_more_changes_at_most_one_pick_of_its_group():
    df = frame(40, 1)
    before = picked(df, 5, 2)
    changed = 0
    for extra in range(50):
        grown = pd.concat([df, pd.DataFrame({"id": [f"new-{extra}"], "g": [0]})], ignore_index=True)
        after = picked(grown, 5, 2)
        assert len(after - before) <= 1 and len(before - after) == len(after - before)
        changed += after != before
    assert 0 < changed < 50  # some new ids enter, most do not (about 5 in 41 of them)


def test_every_id_is_drawn_about_equally_often():
    df = frame(10, 1)
    counts = pd.Series(0, index=df["id"])
    seeds = 3000
    for seed in range(seeds):
        counts[list(picked(df, 3, seed))] += 1
    expected = seeds * 3 / 10  # each id: k/n of the draws; binomial sd about 25
    assert np.abs(counts - expected).max() < 5 * np.sqrt(expected * (1 - 3 / 10))


def test_the_taxonomy_sample_does_not_depend_on_the_order_of_its_rows():
    ids = [f"ind{i:02d}" for i in range(30)]
    table = pd.DataFrame({"indicator_id": ids, "stage": [i % 3 for i in range(30)], "indicator": ids})
    one = sample_per_stage(table, 2, 42)
    other = sample_per_stage(table.iloc[::-1].reset_index(drop=True), 2, 42)
    assert sorted(one["indicator_id"]) == sorted(other["indicator_id"])
    assert one.groupby("stage").size().tolist() == [2, 2, 2]
    assert list(one["indicator_id"]) == sorted(one["indicator_id"])  # the table's order is kept
    assert sample_per_stage(table, 0, 42).equals(table)
