"""Row filters and set checks of the verify stage; every drop keeps its reason.

Every check follows :mod:`curll.verify.verdict`. A :data:`Filter` looks at one row and
returns a :data:`~curll.verify.verdict.Verdict`: None keeps the row, a
:class:`~curll.verify.verdict.Drop` drops it with its code and detail. Set checks (QA counts,
orphans, and the duplicates in :mod:`curll.verify.screen`) return ``{row id: Drop}``.
:func:`drop` applies those flags and returns (kept rows, reject rows). The reject rows take
each Drop's code and detail as they are.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Container, Mapping
from typing import Any

import numpy as np
import pandas as pd

from curll.artifacts import records
from curll.instances import spec
from curll.text import canonical, words
from curll.verify.verdict import Drop, Verdict

Filter = Callable[[Mapping[str, Any]], Verdict]
REJECT_COLUMNS = ["type", "id", "stage", "indicator_id", "reason", "detail"]


def texts_of(kind: str, df: pd.DataFrame) -> list[str]:
    """Every row's text, what it is compared, compressed and graded on: its type's ``compared``
    columns (:mod:`curll.instances`) joined by newlines."""
    columns = [[str(v) for v in df[f].tolist()] for f in spec(kind).compared]
    return ["\n".join(parts) for parts in zip(*columns, strict=True)]


def reject_frame(columns: Mapping[str, Any]) -> pd.DataFrame:
    """A rejects table (RejectSchema columns) with the right dtypes even when empty."""
    df = pd.DataFrame(columns, columns=REJECT_COLUMNS)
    strings = {c: str for c in REJECT_COLUMNS if c != "stage"}
    return df.astype({**strings, "stage": "int64"}).reset_index(drop=True)


def _content(c: str) -> bool:
    return c.isalnum() or unicodedata.category(c) in ("Sm", "Sc") or c == "%"


def not_empty(*fields: str) -> Filter:
    """``empty`` for a field with no letter, digit, maths or currency sign once invisible
    characters are dropped (blank, direction marks alone, punctuation alone): ``>`` and ``%``
    answer questions about symbols."""

    def check(row: Mapping[str, Any]) -> Verdict:
        blank = [f for f in fields if not any(_content(c) for c in canonical(str(row[f])))]
        return Drop("empty", ", ".join(blank)) if blank else None

    return check


def word_range(field: str, lo: int, hi: int) -> Filter:
    def check(row: Mapping[str, Any]) -> Verdict:
        n = len(words(str(row[field])))  # words as every content check counts them
        return None if lo <= n <= hi else Drop("words", f"{n} not in [{lo}, {hi}]")

    return check


def flag(df: pd.DataFrame, filters: list[Filter]) -> dict[str, Drop]:
    """{instance_id: Drop} for rows failing a filter (the first failing filter names it)."""
    out: dict[str, Drop] = {}
    for row in records(df):
        for f in filters:
            if (gone := f(row)) is not None:
                out[row["instance_id"]] = gone
                break
    return out


def qa_count(df: pd.DataFrame, expected: int, link: str) -> dict[str, Drop]:
    """Every pair of a passage (named in column ``link``) whose QA set does not have ``expected`` pairs."""
    sizes = df.groupby(link)["instance_id"].transform("size")
    bad = df[sizes != expected]
    return {
        i: Drop("qa_count", f"{n} pairs, expected {expected}")
        for i, n in zip(bad["instance_id"], sizes[bad.index], strict=True)
    }


def orphans(df: pd.DataFrame, kept_contexts: Container[str], link: str) -> dict[str, Drop]:
    """QA pairs whose passage (named in column ``link``) is not among ``kept_contexts`` (instance ids)."""
    return {
        i: Drop("context_dropped", c)
        for i, c in zip(df["instance_id"], df[link], strict=True)
        if c not in kept_contexts
    }


def flagged(df: pd.DataFrame, flags: Container[str]) -> np.ndarray:
    """Boolean mask of the rows whose instance id is in ``flags``."""
    return np.fromiter((i in flags for i in df["instance_id"]), dtype=bool, count=len(df))


def drop(df: pd.DataFrame, kind: str, flags: Mapping[str, Drop]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows not flagged, reject rows for the flagged ones) in the table's order; ``flags`` may
    hold other rows' ids too (a stage's verdict). A reject's reason and detail are its Drop's
    code and detail."""
    hit = flagged(df, flags)
    gone = df[hit]
    rejects = reject_frame(
        {
            "type": kind,
            "id": gone["instance_id"],
            "stage": gone["stage"],
            "indicator_id": gone["indicator_id"],
            "reason": [flags[i].code for i in gone["instance_id"]],
            "detail": [flags[i].detail for i in gone["instance_id"]],
        }
    )
    return df[~hit].reset_index(drop=True), rejects


def unparsed(gens: pd.DataFrame) -> pd.DataFrame:
    """Reject rows for generation requests that were themselves rejected."""
    bad = gens[gens["status"] != "ok"]
    return reject_frame(
        {
            "type": bad["task"],
            "id": bad["request_key"].str[:16],
            "stage": bad["stage"],
            "indicator_id": bad["indicator_id"],
            "reason": "unparsed",
            "detail": bad["reason"],
        }
    )
