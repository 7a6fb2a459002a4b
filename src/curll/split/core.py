"""The split stage's logic after rating: assignment, decontamination, records and stats.

:func:`select` takes the units (with content) and their ratings and returns the units
table (UnitSchema: split, rank, contaminated) and the rejects (one row per contaminated
train unit, reason ``contaminated``, detail naming the test unit and the overlap).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from curll.artifacts import count_by
from curll.config.verify import SplitParams
from curll.split.assign import assign
from curll.split.decontam import contaminated
from curll.verify.filters import reject_frame


def select(units: pd.DataFrame, ratings: pd.DataFrame, p: SplitParams) -> tuple[pd.DataFrame, pd.DataFrame]:
    placed = assign(ratings, test=p.test_per_indicator, val=p.val_per_indicator, seed=p.seed)
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


def split_stats(placed: pd.DataFrame, ratings: pd.DataFrame, records: pd.DataFrame) -> dict[str, Any]:
    rated = ratings[ratings["rating"] > 0]
    return {
        "units": count_by(placed, ["split", "type"]),
        "records": count_by(records, ["split", "type"]),
        "records_per_stage": count_by(records, ["stage", "split"]),
        "contaminated": int(placed["contaminated"].sum()),
        "ratings": {
            "failed": int((ratings["rating"] == 0).sum()),
            "histogram": {str(k): int(v) for k, v in rated["rating"].value_counts().sort_index().items()},
            "mean": round(float(rated["rating"].mean()), 4) if len(rated) else 0.0,
        },
    }
