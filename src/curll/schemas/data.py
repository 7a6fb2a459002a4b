"""Schemas of the data stages: indicators and words."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

from curll.errors import CurllError

#: the parts of speech the paper keeps from the AoA norms
POS_TAGS = ("Noun", "Verb", "Adjective", "Adverb")

#: a 16-hex-digit content id (indicators, instances, records, items)
HEX16 = r"^[0-9a-f]{16}$"

#: highest stage the code accepts (the paper uses 0-4; the authors' CSV goes to 6)
MAX_STAGE = 9

#: the age (years) stage 0 ends at; each later stage is the next year of age
STAGE0_LAST_AGE = 5


def age_group(stage: int) -> str:
    """Ages covered by a stage: stage 0 is up to age 5, stage k is age 4+k to 5+k."""
    last = STAGE0_LAST_AGE + stage
    return f"0-{last}" if stage == 0 else f"{last - 1}-{last}"


def stage_of_age(age: float) -> int:
    """The stage whose ages (:func:`age_group`) hold ``age`` (years): 0 for age <= 5, k for
    4+k < age <= 5+k. A word's age of acquisition gives its vocabulary band this way."""
    return 0 if age <= STAGE0_LAST_AGE else math.ceil(age - STAGE0_LAST_AGE)


def one_of(column: str, names: Callable[[], tuple[str, ...]], what: str) -> Any:
    """A check of a schema class (assign it to a class attribute) that ``column`` holds only
    ``names()``, read when the table is checked: a registry's names (instance types, orders),
    so a spec registered at run time is known. ``what`` names the check in errors."""
    return pa.check(column, name=what)(classmethod(lambda cls, values: _isin(values, names())))


def _isin(values: pd.Series, names: tuple[str, ...]) -> pd.Series:
    return values.isin(names)


class IndicatorSchema(pa.DataFrameModel):
    """``indicators.parquet``: one row per indicator (a skill tuple at one stage).

    - indicator_id: 16 hex chars, a hash of (stage, skill, subskill, goal, indicator);
      stable across re-imports and row reordering.
    - stage: 0..9; age_group: "0-5" for stage 0, "{4+k}-{5+k}" for stage k.
    - skill / subskill / goal / indicator: the hierarchy, whitespace-normalised.
    - source / source_row: the input file name and its row (for error messages and audit).
    """

    indicator_id: Series[str] = pa.Field(unique=True, str_matches=HEX16)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    age_group: Series[str] = pa.Field(str_matches=r"^\d+-\d+$")
    skill: Series[str] = pa.Field(str_length={"min_value": 1})
    subskill: Series[str] = pa.Field(str_length={"min_value": 1})
    goal: Series[str] = pa.Field(str_length={"min_value": 1})
    indicator: Series[str] = pa.Field(str_length={"min_value": 1})
    source: Series[str] = pa.Field(str_length={"min_value": 1})
    source_row: Series[int] = pa.Field(ge=1)

    class Config:
        strict = True
        ordered = True


class WordSchema(pa.DataFrameModel):
    """``words.parquet``: the stage vocabulary that seeds generation.

    - word: the lemma, lower-case as in the source; pos: one of :data:`POS_TAGS`.
    - aoa: age of acquisition in years (null for the built-in list, which has bands only).
    - perc_known: share of raters who knew the word, 0..1 (null for the built-in list).
    - stage: the band the word belongs to; a (word, pos) sits in several stages only when
      bands are cumulative (curll's own list may give a word's parts of speech other stages:
      "estimate", a noun at 3 and a verb at 4).
    - rank: 0-based order within the stage (most widely known first).
    """

    word: Series[str] = pa.Field(str_length={"min_value": 1})
    pos: Series[str] = pa.Field(isin=list(POS_TAGS))
    aoa: Series[float] = pa.Field(nullable=True, ge=0, le=30)
    perc_known: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    rank: Series[int] = pa.Field(ge=0)

    class Config:
        strict = True
        ordered = True
        unique = ["stage", "word", "pos"]  # noqa: RUF012 (pandera reads a plain list)


def known_indicators(df: pd.DataFrame, known: Collection[str], path: str | Path) -> None:
    """Every ``indicator_id`` of ``df`` (rows of the table ``path``; its index: their row
    numbers) is one of ``known`` (the taxonomy's); else a CurllError naming the first row
    that is not. A table of instances made from another taxonomy fails here, not as a KeyError
    deep in a stage."""
    unknown = ~df["indicator_id"].isin(known)
    if unknown.any():
        row = int(df.index[unknown].to_numpy()[0])
        why = (
            f"indicator {df.at[row, 'indicator_id']!s} is not in the taxonomy: were these made from another?"
        )
        raise CurllError(why, file=path, row=row, field="indicator_id")
