"""Test / validation / train assignment per (stage, indicator, unit type).

Within each group, units are ranked by rating (highest first); ties are broken by
``seeded_key(seed, unit_id)`` (:mod:`curll.draws`), so the order depends only on the seed and
the ids (not on row order) and another seed reorders ties. Ranks 1..test go to test, the next
``val`` to validation, the rest to train; with ``max_holdout`` < 1, test and validation together take
at most that share of a group (rounded down; test first), so a group of a few units still
leaves some to train (the paper's 25 + 25 assume thousands per indicator). :func:`top_up`
then moves more train units of a stage to test where the stage has fewer test records of a type
than the evaluation needs (``split.min_test_records``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import pandas as pd

from curll.draws import seeded_key


def assign(
    ratings: pd.DataFrame, *, test: int, val: int, seed: int, max_holdout: float = 1.0
) -> pd.DataFrame:
    """Columns unit_id, type, stage, indicator_id, rating, rank, split (sorted by group and rank)."""
    df = ratings[["unit_id", "type", "stage", "indicator_id", "rating"]].copy()
    df["_tie"] = [seeded_key(seed, u) for u in df["unit_id"]]
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


def top_up(placed: pd.DataFrame, records: Mapping[str, Counter[str]], need: int, seed: int) -> pd.DataFrame:
    """:func:`assign`'s table with train units moved to test until every stage has ``need`` test
    records of each record type its units make, where the stage's units allow.

    ``records``: unit_id -> the test items it makes by type (an IR pair: ``ir`` 1; a passage: its
    kept CQA and CSQA pairs). Per stage, train units are taken best-rated first (ties by the
    seeded hash, across indicators), only when they make an item of a type still short, and never
    the last train unit of an indicator and unit type. The per-indicator picks stay; this adds to
    them where a stage came out short (a few units, or passages whose pairs verify dropped).
    Returns a copy with column ``topped_up`` (bool); ``need`` 0 moves nothing.
    """
    out = placed.copy()
    out["topped_up"] = False
    if need <= 0:
        return out
    none: Counter[str] = Counter()
    moved: list[int] = []
    for _, group in out.groupby("stage"):
        cols = [group[c].astype(t) for c, t in (("unit_id", str), ("indicator_id", str), ("type", str),
                                                 ("rating", int), ("split", str))]  # fmt: skip
        rows = list(zip(group.index, *cols, strict=True))
        have: Counter[str] = Counter()
        for _, unit, *_rest, split in rows:
            if split == "test":
                have.update(records.get(unit, none))
        made = {t for _, unit, *_rest in rows for t in records.get(unit, none)}
        train = sorted((r for r in rows if r[5] == "train"), key=lambda r: (-r[4], seeded_key(seed, r[1])))
        left = Counter((indicator, kind) for _, _, indicator, kind, _, _ in train)
        for index, unit, indicator, kind, _, _ in train:
            short = {t for t in made if have[t] < need}
            if not short:
                break
            if left[(indicator, kind)] <= 1 or not short & set(records.get(unit, none)):
                continue
            moved.append(index)
            have.update(records[unit])
            left[(indicator, kind)] -= 1
    out.loc[moved, "split"] = "test"
    out.loc[moved, "topped_up"] = True
    return out
