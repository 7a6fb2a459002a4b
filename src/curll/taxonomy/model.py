"""The indicator table: stable ids, age groups, per-stage counts.

An importer yields :class:`IndicatorRecord` values; :func:`build_table` turns them into
the ``indicators`` table (see :class:`curll.schemas.IndicatorSchema`), refusing
duplicates, and :func:`taxonomy_stats` counts skills, sub-skills, goals and
indicators per stage the way the paper's Table 1 does (a sub-skill is counted per
skill, a goal per (skill, sub-skill)).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from curll.errors import CurllError

_WS = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Strip a cell and fold every run of white space (newlines too) to one space."""
    return _WS.sub(" ", text).strip()


def age_group(stage: int) -> str:
    """Ages covered by a stage: stage 0 is up to age 5, stage k is age 4+k to 5+k."""
    return "0-5" if stage == 0 else f"{4 + stage}-{5 + stage}"


def indicator_id(stage: int, skill: str, subskill: str, goal: str, indicator: str) -> str:
    """A content hash, so ids survive re-imports, reordering and added rows."""
    key = "\x1f".join((str(stage), skill, subskill, goal, indicator))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class IndicatorRecord:
    """One indicator as read from a source, with where it came from."""

    stage: int
    skill: str
    subskill: str
    goal: str
    indicator: str
    source: str
    source_row: int
    source_field: str


def build_table(records: Iterable[IndicatorRecord], stages: Iterable[int] | None = None) -> pd.DataFrame:
    """Records -> indicators table, keeping input order; optionally keep only ``stages``.

    Raises CurllError on a duplicate indicator (same stage and hierarchy), naming both
    places, and when a requested stage has no indicators at all.
    """
    wanted = None if stages is None else sorted(set(stages))
    seen: dict[str, IndicatorRecord] = {}
    rows = []
    for rec in records:
        if wanted is not None and rec.stage not in wanted:
            continue
        iid = indicator_id(rec.stage, rec.skill, rec.subskill, rec.goal, rec.indicator)
        if iid in seen:
            first = seen[iid]
            raise CurllError(
                f"duplicate indicator at stage {rec.stage} (same skill, sub-skill and goal as "
                f"row {first.source_row} of {first.source}): {rec.indicator!r}",
                file=rec.source,
                row=rec.source_row,
                field=rec.source_field,
            )
        seen[iid] = rec
        rows.append(
            {
                "indicator_id": iid,
                "stage": rec.stage,
                "age_group": age_group(rec.stage),
                "skill": rec.skill,
                "subskill": rec.subskill,
                "goal": rec.goal,
                "indicator": rec.indicator,
                "source": rec.source,
                "source_row": rec.source_row,
            }
        )
    df = pd.DataFrame(rows, columns=list(_COLUMNS))
    df = df.astype(_COLUMNS)
    if wanted is not None:
        missing = sorted(set(wanted) - set(df["stage"].tolist()))
        if missing:
            raise CurllError(f"no indicators for requested stage(s) {missing}", field="stages")
    return df


_COLUMNS = {
    "indicator_id": "str",
    "stage": "int64",
    "age_group": "str",
    "skill": "str",
    "subskill": "str",
    "goal": "str",
    "indicator": "str",
    "source": "str",
    "source_row": "int64",
}


def taxonomy_stats(df: pd.DataFrame) -> dict[str, dict[str, dict[str, int]]]:
    """``{"stages": {"0": {"skills", "subskills", "goals", "indicators"}, ...}}``."""
    stages: dict[str, dict[str, int]] = {}
    for stage, part in df.groupby("stage", sort=True):
        stages[str(stage)] = {
            "skills": int(part["skill"].nunique()),
            "subskills": int(part[["skill", "subskill"]].drop_duplicates().shape[0]),
            "goals": int(part[["skill", "subskill", "goal"]].drop_duplicates().shape[0]),
            "indicators": len(part),
        }
    return {"stages": stages}
