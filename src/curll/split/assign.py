"""Test / validation / train assignment per (stage, indicator, unit type).

Within each group, units are ranked by rating (highest first); ties are broken by
``sha256(f"{seed}:{unit_id}")``, so the order depends only on the seed and the ids (not on
row order) and another seed reorders ties. Ranks 1..test go to test, the next ``val`` to
validation, the rest to train; with ``max_holdout`` < 1, test and validation together take
at most that share of a group (rounded down; test first), so a group of a few units still
leaves some to train (the paper's 25 + 25 assume thousands per indicator).
"""

from __future__ import annotations

import hashlib

import pandas as pd


def tie_key(seed: int, unit_id: str) -> str:
    return hashlib.sha256(f"{seed}:{unit_id}".encode()).hexdigest()


def assign(
    ratings: pd.DataFrame, *, test: int, val: int, seed: int, max_holdout: float = 1.0
) -> pd.DataFrame:
    """Columns unit_id, type, stage, indicator_id, rating, rank, split (sorted by group and rank)."""
    df = ratings[["unit_id", "type", "stage", "indicator_id", "rating"]].copy()
    df["_tie"] = [tie_key(seed, u) for u in df["unit_id"]]
    df = df.sort_values(
        ["stage", "indicator_id", "type", "rating", "_tie"], ascending=[True, True, True, False, True]
    )
    groups = df.groupby(["stage", "indicator_id", "type"])
    df["rank"] = groups.cumcount() + 1
    cap = (groups["rank"].transform("size") * max_holdout).astype(int)  # floor
    n_test = cap.clip(upper=test)
    n_val = (cap - n_test).clip(upper=val)
    df["split"] = "train"
    df.loc[df["rank"] <= n_test + n_val, "split"] = "validation"
    df.loc[df["rank"] <= n_test, "split"] = "test"
    return df.drop(columns="_tie").reset_index(drop=True)
