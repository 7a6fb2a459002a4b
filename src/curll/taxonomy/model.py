"""The indicator table: stable ids, age groups, per-stage counts.

An importer yields :class:`IndicatorRecord` values; :func:`build_table` turns them into
the ``indicators`` table (see :class:`curll.schemas.IndicatorSchema`), refusing
duplicates or dropping them (:data:`DuplicatePolicy`), and :func:`taxonomy_stats` counts
skills, sub-skills, goals and indicators per stage the way the paper's Table 1 does (a
sub-skill is counted per skill, a goal per (skill, sub-skill)).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from curll.errors import CurllError
from curll.schemas.data import age_group
from curll.text import canonical

_WS = re.compile(r"\s+")

#: what :func:`build_table` does with an indicator repeated under one stage, skill,
#: sub-skill and goal: ``error`` stops naming both rows; ``drop`` keeps the first
DuplicatePolicy = Literal["error", "drop"]


def normalise(text: str) -> str:
    """Strip a cell, fold every run of white space (newlines too) to one space, drop invisible
    zero-width characters and compose accents (NFC): "café" typed either way is one text, and
    one indicator id."""
    return _WS.sub(" ", canonical(text)).strip()


#: what a spreadsheet cell holds for "nothing here" (casefolded): no text (:func:`cell_text`)
PLACEHOLDERS = frozenset({"-", "\u2013", "\u2014", "n/a", "na", "#n/a", "nan", "null", "none"})


def cell_text(raw: str) -> str:
    """:func:`normalise` of a CSV cell, "" for a placeholder (:data:`PLACEHOLDERS`: ``N/A``,
    ``#N/A``, ``-``...): never an indicator or a skill named "N/A"."""
    text = normalise(raw)
    return "" if text.casefold() in PLACEHOLDERS else text


def indicator_id(stage: int, skill: str, subskill: str, goal: str, indicator: str) -> str:
    """A content hash, so ids survive re-imports, reordering and added rows."""
    key = "\x1f".join((str(stage), skill, subskill, goal, indicator))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class IndicatorRecord:
    """One indicator as read from a source, with where it came from: ``source`` is the file's
    name (kept in the table), ``path`` the file as given (named in messages: two folders may
    hold files of one name)."""

    stage: int
    skill: str
    subskill: str
    goal: str
    indicator: str
    source: str
    source_row: int
    source_field: str
    path: str = ""

    @property
    def where(self) -> str:
        return self.path or self.source


@dataclass(frozen=True)
class Duplicate:
    """An indicator dropped as a repeat of ``first`` (policy ``drop``)."""

    dropped: IndicatorRecord
    first: IndicatorRecord

    def describe(self) -> str:
        d, f = self.dropped, self.first
        return (f"{d.where}, row {d.source_row}, field '{d.source_field}': dropped a repeat of row "
                f"{f.source_row} of {f.where} (stage {d.stage}, same skill, sub-skill and goal): "
                f"{d.indicator!r}")  # fmt: skip


def build_table(
    records: Iterable[IndicatorRecord],
    stages: Iterable[int] | None = None,
    duplicates: DuplicatePolicy = "error",
    source: str | None = None,
) -> tuple[pd.DataFrame, list[Duplicate]]:
    """Records -> (indicators table in input order, the repeats dropped); optionally keep
    only ``stages``.

    A repeat is an indicator whose stage, skill, sub-skill, goal and text (after white-space
    folding) equal an earlier one's; the same text under another goal is not a repeat. With
    ``duplicates="error"`` a repeat raises CurllError naming both places; with ``"drop"`` the
    first is kept and the repeat is returned. A requested stage with no indicators at all
    raises CurllError naming ``source`` (the inputs) and the stages they have.
    """
    if duplicates not in ("error", "drop"):
        raise CurllError(f"must be error or drop, got {duplicates!r}", field="duplicates")
    wanted = None if stages is None else sorted(set(stages))
    seen: dict[str, IndicatorRecord] = {}
    dropped: list[Duplicate] = []
    rows = []
    found: set[int] = set()
    for rec in records:
        found.add(rec.stage)
        if wanted is not None and rec.stage not in wanted:
            continue
        iid = indicator_id(rec.stage, rec.skill, rec.subskill, rec.goal, rec.indicator)
        if iid in seen:
            first = seen[iid]
            if duplicates == "drop":
                dropped.append(Duplicate(rec, first))
                continue
            raise CurllError(
                f"duplicate indicator at stage {rec.stage} (same skill, sub-skill and goal as "
                f"row {first.source_row} of {first.where}): {rec.indicator!r}; "
                "taxonomy.duplicates: drop (--duplicates drop) keeps the first",
                file=rec.where,
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
            raise CurllError(f"no indicator for stage(s) {missing} of the stages asked for {wanted}; the "
                             f"input has stage(s) {sorted(found)}", file=source, field="stages")  # fmt: skip
    return df, dropped


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


def taxonomy_stats(df: pd.DataFrame, dropped: Iterable[Duplicate] = ()) -> dict[str, Any]:
    """``{"stages": {"0": {"skills", "subskills", "goals", "indicators", "duplicates_dropped"},
    ...}, "duplicates_dropped": n}``: per stage, and in all, the repeats :func:`build_table`
    dropped (0 under the ``error`` policy)."""
    repeats = Counter(d.dropped.stage for d in dropped)
    stages: dict[str, dict[str, int]] = {}
    for stage, part in df.groupby("stage", sort=True):
        stages[str(stage)] = {
            "skills": int(part["skill"].nunique()),
            "subskills": int(part[["skill", "subskill"]].drop_duplicates().shape[0]),
            "goals": int(part[["skill", "subskill", "goal"]].drop_duplicates().shape[0]),
            "indicators": len(part),
            "duplicates_dropped": repeats.get(int(str(stage)), 0),
        }
    return {"stages": stages, "duplicates_dropped": sum(repeats.values())}
