"""The split stage's logic after rating: assignment, decontamination, records and stats.

:func:`select` takes the units (with content) and the ratings of those that were rated and
returns the units table (UnitSchema: split, rank, contaminated; a unit left out of the rated
sample has rating -1, so it ranks after every rated one and goes to train) and the rejects
(one row per contaminated train unit, reason ``contaminated``, detail naming the test unit
and the overlap).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from curll.artifacts import count_by
from curll.config.verify import SplitParams
from curll.split.assign import assign
from curll.split.decontam import contaminated
from curll.verify.filters import reject_frame
from curll.yields import YieldError


def select(units: pd.DataFrame, ratings: pd.DataFrame, p: SplitParams) -> tuple[pd.DataFrame, pd.DataFrame]:
    rated = units[["unit_id", "type", "stage", "indicator_id"]].merge(
        ratings[["unit_id", "rating"]], on="unit_id", how="left", validate="one_to_one"
    )
    rated["rating"] = rated["rating"].fillna(-1).astype(int)
    placed = assign(
        rated,
        test=p.test_per_indicator,
        val=p.val_per_indicator,
        seed=p.seed,
        max_holdout=float(p.max_holdout),
    )
    content = dict(zip(units["unit_id"], units["content"], strict=True))
    by_split = {s: placed.loc[placed["split"] == s, "unit_id"] for s in ("train", "test")}
    hits = contaminated(
        {u: content[u] for u in by_split["train"]},
        {u: content[u] for u in by_split["test"]},
        n=p.decontamination.ngram,
        threshold=p.decontamination.threshold,
    )
    worst = {h.train_id: h for h in hits}
    placed["contaminated"] = placed["unit_id"].isin(set(worst))
    gone = placed[placed["contaminated"]]
    rejects = reject_frame(
        {
            "type": gone["type"],
            "id": gone["unit_id"],
            "stage": gone["stage"],
            "indicator_id": gone["indicator_id"],
            "reason": "contaminated",
            "detail": [
                f"overlap {worst[u].overlap:.2f} with test {worst[u].test_id}" for u in gone["unit_id"]
            ],
        }
    )
    return placed, rejects


def require_records(records: pd.DataFrame, stages: list[int], p: SplitParams) -> None:
    """Every stage must have train records, and test records when asked for any (validation
    records are counted, not required per stage: with ``max_holdout`` a small stage may have
    none); else :class:`~curll.yields.YieldError` with the counts per stage and split."""
    wanted = ["train"] + ["test"] * (p.test_per_indicator > 0)
    sizes = records.groupby(["stage", "split"]).size().reset_index(name="n")
    counts = {
        (int(s), str(k)): int(n) for s, k, n in zip(sizes["stage"], sizes["split"], sizes["n"], strict=True)
    }
    empty = [
        f"  stage {s} {split}: 0 records"
        for s in stages
        for split in wanted
        if counts.get((s, split), 0) == 0
    ]
    if empty:
        have = ", ".join(f"stage {s} {k} {n}" for (s, k), n in counts.items()) or "none"
        raise YieldError(
            "split: empty splits (every stage needs train records, and test/validation when "
            "split.test_per_indicator/val_per_indicator ask for them):\n"
            + "\n".join(empty)
            + f"\n  records made: {have}",
            field="split",
        )


def split_stats(placed: pd.DataFrame, ratings: pd.DataFrame, records: pd.DataFrame) -> dict[str, Any]:
    rated = ratings[ratings["rating"] > 0]
    return {
        "units": count_by(placed, ["split", "type"]),
        "records": count_by(records, ["split", "type"]),
        "records_per_stage": count_by(records, ["stage", "split"]),
        "contaminated": int(placed["contaminated"].sum()),
        "ratings": {
            "rated": len(ratings),
            "not_rated": int((placed["rating"] < 0).sum()),
            "failed": int((ratings["rating"] == 0).sum()),
            "histogram": {str(k): int(v) for k, v in rated["rating"].value_counts().sort_index().items()},
            "mean": round(float(rated["rating"].mean()), 4) if len(rated) else 0.0,
        },
    }
