"""Enough test items per stage and type, or a gap that says where the items were lost.

:func:`gaps` lists every (stage, type) of the trained stages and evaluated types whose scored
test records are fewer than ``min_items``, each with how many instances of that stage and type
were generated and how many verify kept, so the message names the step to fix: nothing
generated (more seeds or a better yield), all dropped by verify (its reasons are in
``data/verify/rejects.parquet``), or too few kept for the split to put some in test. For
records imported from a release (``split.source: import``) the message points at the sample.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

Counts = Mapping[tuple[int, str], int]


@dataclass(frozen=True)
class Gap:
    """One stage and type with fewer than ``min_items`` scored test records."""

    stage: int
    type: str
    test: int
    generated: int | None  #: None: the records were imported, not generated
    verified: int | None

    def why(self) -> str:
        if self.generated is None or self.verified is None:
            if self.test == 0:
                return "none scored: too long for train.context, or test not in evaluate.loss.splits"
            return "the imported sample holds no more: raise split.imported.test"
        if self.generated == 0:
            return "none were generated"
        if self.verified == 0:
            return f"{self.generated} generated, verify dropped them all"
        return f"{self.generated} generated, {self.verified} kept by verify, {self.test} went to test"

    def __str__(self) -> str:
        return f"stage {self.stage} {self.type}: {self.test} scored test records ({self.why()})"


def gaps(
    test: Counts,
    stages: Iterable[int],
    types: Iterable[str],
    min_items: int,
    *,
    generated: Counts | None,
    verified: Counts | None,
) -> list[Gap]:
    """The (stage, type) pairs, in order, with fewer than ``min_items`` test records; counts
    are keyed by (stage, type), a missing key counting 0; None for imported records."""

    def count(counts: Counts | None, key: tuple[int, str]) -> int | None:
        return None if counts is None else counts.get(key, 0)

    return [
        Gap(s, t, test.get((s, t), 0), count(generated, (s, t)), count(verified, (s, t)))
        for s in sorted(stages)
        for t in types
        if test.get((s, t), 0) < min_items
    ]
