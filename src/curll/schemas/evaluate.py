"""Schemas of the evaluate stages: test items, model answers, judge ratings, scores."""

from __future__ import annotations

import pandera.pandas as pa
from pandera.typing import Series

from curll.schemas.data import MAX_STAGE
from curll.schemas.generation import HEX16, Provenance

TEST_TYPES = ("ir", "cqa", "csqa")
#: the ``run`` and ``order`` of the untrained baseline model
UNTRAINED = "untrained"
#: the training orders, in the order reports list them
ORDERS = ("independent", "joint", "continual")
MODEL_ORDERS = (*ORDERS, UNTRAINED)


class ItemSchema(pa.DataFrameModel):
    """``items.parquet``: one test question (see :mod:`curll.evaluate.items`); ``dropped``: empty
    for an item the models answer, else why it is not asked."""

    item_id: Series[str] = pa.Field(unique=True, str_matches=HEX16)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    indicator_id: Series[str] = pa.Field(str_matches=HEX16)
    skill: Series[str]
    subskill: Series[str]
    goal: Series[str]
    indicator: Series[str]
    age_group: Series[str]
    type: Series[str] = pa.Field(isin=list(TEST_TYPES))
    system: Series[str]
    context: Series[str]
    question: Series[str]
    reference: Series[str]
    q_index: Series[int] = pa.Field(ge=1)
    dropped: Series[str] = pa.Field(isin=["", "prompt_too_long"])

    class Config:
        strict = True


class LossSchema(pa.DataFrameModel):
    """``losses.parquet``: one model's negative log-likelihood of one held-out record's answer
    (see :mod:`curll.evaluate.loss`). nll: summed nats over the answer's ``tokens`` (null, with
    tokens 0, when the record does not fit ``train.context`` even with its passage cut)."""

    record_id: Series[str] = pa.Field(str_matches=HEX16)
    split: Series[str] = pa.Field(isin=["test", "validation"])
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    type: Series[str] = pa.Field(isin=list(TEST_TYPES))
    run: Series[str] = pa.Field(str_length={"min_value": 1})
    order: Series[str] = pa.Field(isin=list(MODEL_ORDERS))
    seed: Series[int]
    trained_to: Series[int] = pa.Field(ge=-1, le=MAX_STAGE)
    nll: Series[float] = pa.Field(ge=0, nullable=True)
    tokens: Series[int] = pa.Field(ge=0)

    class Config:
        strict = True
        unique = ["record_id", "run"]  # noqa: RUF012


class AnswerSchema(Provenance):
    """``answers.parquet``: a trained model's answer to an item. run: the model's name
    (``seed-42/continual/0-1``; ``seed-42/untrained``), seed: its ``train.seeds`` entry,
    trained_to: -1 for the untrained model; answer: empty when rejected. The provenance
    ``model`` is the run name with a fingerprint of its weights."""

    item_id: Series[str] = pa.Field(str_matches=HEX16)
    run: Series[str] = pa.Field(str_length={"min_value": 1})
    order: Series[str] = pa.Field(isin=list(MODEL_ORDERS))
    seed: Series[int]
    trained_to: Series[int] = pa.Field(ge=-1, le=MAX_STAGE)
    answer: Series[str]
    truncated: Series[bool]

    class Config:
        strict = True
        unique = ["item_id", "run"]  # noqa: RUF012 (pandera reads a plain list)


class JudgeRatingSchema(Provenance):
    """``ratings.parquet``: one judge's rating of one run's answer (1-5; null when the judge's
    output did not parse). judge: the llm profile; the provenance ``model`` is the judge's."""

    item_id: Series[str] = pa.Field(str_matches=HEX16)
    run: Series[str] = pa.Field(str_length={"min_value": 1})
    judge: Series[str] = pa.Field(str_length={"min_value": 1})
    type: Series[str] = pa.Field(isin=list(TEST_TYPES))
    rating: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    explanation: Series[str]

    class Config:
        strict = True
        unique = ["item_id", "run", "judge"]  # noqa: RUF012


class RubricSchema(Provenance):
    """``rubric.parquet``: one judge's five criterion scores for one answer (1-5 each; null
    when the judge's output did not parse). Empty when ``evaluate.rubric.enabled`` is false."""

    item_id: Series[str] = pa.Field(str_matches=HEX16)
    run: Series[str] = pa.Field(str_length={"min_value": 1})
    judge: Series[str] = pa.Field(str_length={"min_value": 1})
    type: Series[str] = pa.Field(isin=list(TEST_TYPES))
    vocabulary: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    concepts: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    correctness: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    clarity: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    completeness: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    explanation: Series[str]

    class Config:
        strict = True
        unique = ["item_id", "run", "judge"]  # noqa: RUF012


class ScoreSchema(pa.DataFrameModel):
    """``scores.parquet``: (item, model) with the mean judge score (null: no judge parsed);
    no_answer: the model's output was empty or a loop, scored 1 without a judge."""

    item_id: Series[str] = pa.Field(str_matches=HEX16)
    run: Series[str]
    order: Series[str] = pa.Field(isin=list(MODEL_ORDERS))
    seed: Series[int]
    trained_to: Series[int] = pa.Field(ge=-1, le=MAX_STAGE)
    answer: Series[str]
    no_answer: Series[bool]
    score: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    judged: Series[int] = pa.Field(ge=0)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    type: Series[str] = pa.Field(isin=list(TEST_TYPES))
    indicator_id: Series[str] = pa.Field(str_matches=HEX16)
    skill: Series[str]
    subskill: Series[str]
    indicator: Series[str]

    class Config:
        strict = True
