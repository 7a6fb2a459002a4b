"""The split stage's logic after rating: assignment, decontamination, records and stats.

:func:`select` takes the units (with content) and the ratings of those that were rated and
returns the units table (UnitSchema: split, rank, contaminated, topped_up; a unit left out of the rated
sample has rating -1, so it ranks after every rated one and goes to train) and the rejects
(one row per contaminated unit, reason ``contaminated``, detail naming the held-out unit and
the overlap): a validation unit that overlaps a test unit, then a train unit that overlaps a test
or kept validation unit (:mod:`curll.split.decontam`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pandas as pd

from curll.artifacts import count_by
from curll.config.verify import SplitParams
from curll.split.assign import assign, top_up
from curll.split.decontam import Contamination, contaminated
from curll.verify.filters import reject_frame
from curll.yields import YieldError


def select(
    units: pd.DataFrame,
    ratings: pd.DataFrame,
    p: SplitParams,
    *,
    content: Callable[[str, str], str] | None = None,
    records: Mapping[str, Counter[str]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``content(unit_id, type)`` gives a unit's text (default: the ``content`` column of
    ``units``); train units are read once, as a stream. ``records`` (unit_id -> records it
    makes, by type) lets :func:`~curll.split.assign.top_up` give each stage
    ``p.min_test_records`` test records of each type; without it nothing is topped up."""
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
    placed = top_up(placed, records or {}, p.min_test_records if records is not None else 0, p.seed)
    if content is None:
        texts = dict(zip(units["unit_id"], units["content"], strict=True))

        def content(unit: str, kind: str) -> str:
            return str(texts[unit])

    def of(split: str) -> Iterator[tuple[str, str]]:
        rows = placed[placed["split"] == split]
        for unit, kind in zip(rows["unit_id"], rows["type"], strict=True):
            yield unit, content(unit, kind)

    def against(units: Iterator[tuple[str, str]], held: dict[str, str]) -> dict[str, Contamination]:
        found = contaminated(units, held, n=p.decontamination.ngram, threshold=p.decontamination.threshold)
        return {h.train_id: h for h in found}

    test, validation = dict(of("test")), dict(of("validation"))
    worst = against(iter(validation.items()), test)  # validation is held out from test too...
    held = {**test, **{u: text for u, text in validation.items() if u not in worst}}
    worst |= against(of("train"), held)  # ...and train from both
    split_of = dict(zip(placed["unit_id"], placed["split"], strict=True))
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
                f"overlap {worst[u].overlap:.2f} with {split_of[worst[u].test_id]} {worst[u].test_id}"
                for u in gone["unit_id"]
            ],
        }
    )
    return placed, rejects


#: records per (stage, split, type)
RecordCounts = Counter[tuple[int, str, str]]


def record_counts(records: pd.DataFrame) -> RecordCounts:
    return Counter(
        zip(records["stage"].tolist(), records["split"].tolist(), records["type"].tolist(), strict=True)
    )


def require_records(counts: RecordCounts, stages: list[int], p: SplitParams) -> None:
    """Every stage must have train records, and test records when asked for any (validation
    records are counted, not required per stage: with ``max_holdout`` a small stage may have
    none); else :class:`~curll.yields.YieldError` with the counts per stage and split."""
    wanted = ["train"] + ["test"] * (p.test_per_indicator > 0)
    per: Counter[tuple[int, str]] = Counter()
    for (stage, split, _), n in counts.items():
        per[(stage, split)] += n
    empty = [
        f"  stage {s} {split}: 0 records" for s in stages for split in wanted if per.get((s, split), 0) == 0
    ]
    if empty:
        have = ", ".join(f"stage {s} {k} {n}" for (s, k), n in sorted(per.items())) or "none"
        raise YieldError(
            "split: empty splits (every stage needs train records, and test ones when "
            "split.test_per_indicator asks for them):\n" + "\n".join(empty) + f"\n  records made: {have}",
            field="split",
        )


def record_stats(counts: RecordCounts) -> dict[str, dict[str, int]]:
    """The stats' record counts: ``records`` by ``split/type``, ``records_per_stage`` by
    ``stage/split``."""

    def by(key: Callable[[tuple[int, str, str]], tuple[Any, ...]]) -> dict[str, int]:
        out: Counter[tuple[Any, ...]] = Counter()
        for k, n in counts.items():
            out[key(k)] += n
        return {"/".join(str(x) for x in k): n for k, n in sorted(out.items())}

    return {"records": by(lambda k: (k[1], k[2])), "records_per_stage": by(lambda k: (k[0], k[1]))}


def split_stats(placed: pd.DataFrame, ratings: pd.DataFrame, counts: RecordCounts) -> dict[str, Any]:
    rated = ratings[ratings["rating"] > 0]
    return {
        "units": count_by(placed, ["split", "type"]),
        **record_stats(counts),
        "contaminated": int(placed["contaminated"].sum()),
        "topped_up": by_stage(placed[placed["topped_up"]]),
        "ratings": {
            "rated": len(ratings),
            "not_rated": int((placed["rating"] < 0).sum()),
            "failed": int((ratings["rating"] == 0).sum()),
            "histogram": {str(k): int(v) for k, v in rated["rating"].value_counts().sort_index().items()},
            "mean": round(float(rated["rating"].mean()), 4) if len(rated) else 0.0,
        },
    }


def by_stage(units: pd.DataFrame) -> dict[str, int]:
    """Units per stage (``"0"``: n), for the stats."""
    return {str(k): int(v) for k, v in units["stage"].value_counts().sort_index().items()}
