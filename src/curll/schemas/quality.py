"""Schemas of the data-quality stages: verify rejects, split ratings, units and records."""

from __future__ import annotations

import pandera.pandas as pa
from pandera.typing import Series

from curll import instances
from curll.schemas.data import HEX16, MAX_STAGE, one_of
from curll.schemas.generation import Provenance

#: what verify drops, and why (the ``reason`` column of the rejects tables)
VERIFY_REASONS = (
    "unparsed",  # the generation request itself was rejected (its reason is in detail)
    "empty",  # a required text field has no letter, digit, maths or currency sign (blank, punctuation alone)
    "words",  # passage length outside verify.context_words
    "qa_count",  # a passage's QA set has the wrong number of pairs
    "exact_duplicate",  # same normalised text as an earlier row
    "near_duplicate",  # cosine >= verify.semantic.threshold with a kept row of the same stage
    "context_dropped",  # the QA pair's passage was dropped
    "degenerate",  # a repetition loop, or a reply that repeats its prompt
    "short_prompt",  # an instruction or question under verify.content.min_prompt_words words
    "not_english",  # too few English dictionary words (verify.content.english)
    "seed_word",  # the seed's vocabulary word is not in the passage / IR pair
    "off_topic",  # less similar to its own indicator than to too many others (verify.content.on_topic)
    "ungrounded",  # a CQA answer whose content words are mostly not in its passage
)
SPLITS = ("train", "validation", "test")
#: the check of a ``type`` column that holds any instance type, or only a seeded one (a unit's)
_ANY_TYPE = ("type", instances.names, "an instance type")
_UNIT_TYPE = ("type", instances.seeded, "a seeded instance type (a unit's)")


class RejectSchema(pa.DataFrameModel):
    """``rejects.parquet`` of verify and split: one dropped row each.

    type: an instance type (context | ir | cqa | csqa); id: the instance id (or the request key's first 16
    hex chars for an unparsed request); reason: a code (see VERIFY_REASONS, plus
    ``contaminated`` from split); detail: the evidence, e.g. ``dup of 3f.. (0.97)``.
    """

    type: Series[str]
    id: Series[str] = pa.Field(str_matches=HEX16)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    indicator_id: Series[str] = pa.Field(str_matches=HEX16)
    reason: Series[str] = pa.Field(isin=[*VERIFY_REASONS, "contaminated"])
    detail: Series[str]

    _type = one_of(*_ANY_TYPE)

    class Config:
        strict = True


class RatingSchema(Provenance):
    """``ratings.parquet``: the LLM quality rating of each unit (1-5; 0 when the request failed)."""

    unit_id: Series[str] = pa.Field(unique=True, str_matches=HEX16)
    type: Series[str]
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    indicator_id: Series[str] = pa.Field(str_matches=HEX16)
    rating: Series[int] = pa.Field(ge=0, le=5)
    explanation: Series[str]

    _type = one_of(*_UNIT_TYPE)

    class Config:
        strict = True


class UnitSchema(pa.DataFrameModel):
    """``units.parquet``: where each unit went. A unit is an instance of a seeded type: an IR pair,
    or a passage with the instances made on it (its CQA and CSQA).

    rank: 1-based position within (stage, indicator, type) by rating, ties broken by a seeded
    hash; split: test for the best ``test_per_indicator``, then validation, then train.
    rating: the LLM's 1-5, 0 when its request failed, -1 for a unit outside the rated sample
    (``split.rate_per_indicator``), which always goes to train.
    contaminated: a train or validation unit dropped by decontamination (its split stays as placed).
    topped_up: a unit moved from train to test so its stage has ``split.min_test_records`` test
    records of a type (:func:`curll.split.assign.top_up`).
    """

    unit_id: Series[str] = pa.Field(unique=True, str_matches=HEX16)
    type: Series[str]
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    indicator_id: Series[str] = pa.Field(str_matches=HEX16)
    rating: Series[int] = pa.Field(ge=-1, le=5)
    rank: Series[int] = pa.Field(ge=1)
    split: Series[str] = pa.Field(isin=list(SPLITS))
    contaminated: Series[bool]
    topped_up: Series[bool]

    _type = one_of(*_UNIT_TYPE)

    class Config:
        strict = True


#: the order of the rows of ``records.parquet`` (the release writes a file per stage and split
#: from it, a stream at a time)
RECORD_ORDER = ("stage", "split", "type", "record_id")


class RecordSchema(pa.DataFrameModel):
    """``records.parquet``: chat-format examples for training and evaluation.

    messages: JSON list of {"role": system|user|assistant, "content": str}, ending with the
    assistant turn the loss (or the judge) is about, laid out by the type's spec
    (:meth:`curll.instances.InstanceType.user_turn`): type context: the passage is the answer
    to a writing request; cqa / csqa: the passage and the question are the user turn.
    unit_id ties a record to its unit (a passage's CQA/CSQA share the passage's unit_id).
    """

    record_id: Series[str] = pa.Field(unique=True, str_matches=HEX16)
    unit_id: Series[str] = pa.Field(str_matches=HEX16)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    indicator_id: Series[str] = pa.Field(str_matches=HEX16)
    skill: Series[str]
    subskill: Series[str]
    indicator: Series[str]
    type: Series[str]
    split: Series[str] = pa.Field(isin=list(SPLITS))
    messages: Series[str] = pa.Field(str_startswith="[")

    _type = one_of(*_ANY_TYPE)

    class Config:
        strict = True
