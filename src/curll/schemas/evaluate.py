"""Schemas of the evaluate stages: test items, model answers, judge ratings, scores."""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

from curll import instances, orders
from curll.schemas.data import HEX16, MAX_STAGE, one_of
from curll.schemas.generation import Provenance

#: the ``run`` and ``order`` of the untrained baseline model
UNTRAINED = "untrained"


def model_orders() -> tuple[str, ...]:
    """What a model's ``order`` may be: a registered order (:mod:`curll.orders`, read at the
    time of the check) or :data:`UNTRAINED`."""
    return (*orders.names(), UNTRAINED)


#: the check of a ``type`` column of a test type (:func:`curll.instances.evaluated`)
_TEST_TYPE = ("type", instances.evaluated, "a test type (an evaluated instance type)")


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
    type: Series[str]
    system: Series[str]
    context: Series[str]
    question: Series[str]
    reference: Series[str]
    q_index: Series[int] = pa.Field(ge=1)
    dropped: Series[str] = pa.Field(isin=["", "prompt_too_long"])

    _type = one_of(*_TEST_TYPE)

    class Config:
        strict = True


def _scored_where_tokens(df: pd.DataFrame) -> pd.Series:
    """Per row: nll is null exactly where tokens is 0, and unigram_nll exactly where nll is."""
    return (df["nll"].isna() == (df["tokens"] == 0)) & (df["unigram_nll"].isna() == df["nll"].isna())


class LossSchema(pa.DataFrameModel):
    """``losses.parquet``: one model's negative log-likelihood of one held-out record's answer
    (see :mod:`curll.evaluate.loss`). nll: summed nats over the answer's ``tokens`` (null, with
    tokens 0, when the record does not fit ``train.context`` even with its passage cut);
    unigram_nll: the same tokens' summed nats under the add-one unigram of the answers the model
    was trained on (:mod:`curll.evaluate.unigram`), null where nll is."""

    record_id: Series[str] = pa.Field(str_matches=HEX16)
    split: Series[str] = pa.Field(isin=["test", "validation"])
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    type: Series[str]
    run: Series[str] = pa.Field(str_length={"min_value": 1})
    order: Series[str]
    seed: Series[int]
    trained_to: Series[int] = pa.Field(ge=-1, le=MAX_STAGE)
    nll: Series[float] = pa.Field(ge=0, nullable=True)
    tokens: Series[int] = pa.Field(ge=0)
    unigram_nll: Series[float] = pa.Field(ge=0, nullable=True)

    _order = one_of("order", model_orders, "a registered order or untrained")

    _type = one_of(*_TEST_TYPE)

    _scored = pa.dataframe_check(name="nll and unigram_nll null exactly where tokens is 0")(
        classmethod(lambda cls, df: _scored_where_tokens(df))
    )

    class Config:
        strict = True
        unique = ["record_id", "run"]  # noqa: RUF012


class AnswerSchema(Provenance):
    """``answers.parquet``: a trained model's answer to an item. run: the model's name
    (``seed-42/continual/0-1``; ``seed-42/untrained``), repeat: which of the ``evaluate.repeats``
    answers of the item by the model (0-based; repeat r sampled with ``evaluate.infer.sampling.seed
    + r``), seed: its ``train.seeds`` entry, trained_to: -1 for the untrained model; answer: empty
    when rejected. The provenance ``model`` is the run name with a fingerprint of its weights."""

    item_id: Series[str] = pa.Field(str_matches=HEX16)
    run: Series[str] = pa.Field(str_length={"min_value": 1})
    repeat: Series[int] = pa.Field(ge=0)
    order: Series[str]
    seed: Series[int]
    trained_to: Series[int] = pa.Field(ge=-1, le=MAX_STAGE)
    answer: Series[str]
    truncated: Series[bool]

    _order = one_of("order", model_orders, "a registered order or untrained")

    class Config:
        strict = True
        unique = ["item_id", "run", "repeat"]  # noqa: RUF012 (pandera reads a plain list)


class JudgeRatingSchema(Provenance):
    """``ratings.parquet``: one judge's rating of one run's answer (1-5; null when the judge's
    output did not parse). repeat: the answer's (see :class:`AnswerSchema`), rated with the
    judge's sampling seed + repeat; judge: the llm profile; the provenance ``model`` is the judge's."""

    item_id: Series[str] = pa.Field(str_matches=HEX16)
    run: Series[str] = pa.Field(str_length={"min_value": 1})
    repeat: Series[int] = pa.Field(ge=0)
    judge: Series[str] = pa.Field(str_length={"min_value": 1})
    type: Series[str]
    rating: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    explanation: Series[str]

    _type = one_of(*_TEST_TYPE)

    class Config:
        strict = True
        unique = ["item_id", "run", "repeat", "judge"]  # noqa: RUF012


#: the controls every judge rates beside the answers (see :mod:`curll.evaluate.controls`)
CONTROLS = ("reference", "mismatch", "empty", "shuffled")


class ControlRatingSchema(Provenance):
    """``controls.parquet``: one judge's rating of one control answer of a test item (1-5; null
    when the judge's output did not parse). control: reference (the item's reference answer),
    mismatch (another item's reference), empty (the empty answer, rated by the judge) or
    shuffled (the reference's words in a random order); answer: the text the judge rated."""

    item_id: Series[str] = pa.Field(str_matches=HEX16)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    type: Series[str]
    control: Series[str] = pa.Field(isin=list(CONTROLS))
    judge: Series[str] = pa.Field(str_length={"min_value": 1})
    answer: Series[str]
    rating: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    explanation: Series[str]

    _type = one_of(*_TEST_TYPE)

    class Config:
        strict = True
        unique = ["item_id", "control", "judge"]  # noqa: RUF012


class RubricSchema(Provenance):
    """``rubric.parquet``: one judge's five criterion scores for one answer (1-5 each; null
    when the judge's output did not parse), of each repeat as the ratings. Empty when
    ``evaluate.rubric.enabled`` is false."""

    item_id: Series[str] = pa.Field(str_matches=HEX16)
    run: Series[str] = pa.Field(str_length={"min_value": 1})
    repeat: Series[int] = pa.Field(ge=0)
    judge: Series[str] = pa.Field(str_length={"min_value": 1})
    type: Series[str]
    vocabulary: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    concepts: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    correctness: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    clarity: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    completeness: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    explanation: Series[str]

    _type = one_of(*_TEST_TYPE)

    class Config:
        strict = True
        unique = ["item_id", "run", "repeat", "judge"]  # noqa: RUF012


class ScoreSchema(pa.DataFrameModel):
    """``scores.parquet``: one row per (item, model): score, the mean over the model's
    ``repeats`` answers of each one's mean judge rating (1 for an answer that was empty or a
    loop, scored without a judge; an answer no judge parsed, or a backend error, is left out;
    null: no answer has a score); no_answer: every repeat was empty or a loop; judged: the
    judges' ratings that parsed, all repeats together; answer: repeat 0's."""

    item_id: Series[str] = pa.Field(str_matches=HEX16)
    run: Series[str]
    order: Series[str]
    seed: Series[int]
    trained_to: Series[int] = pa.Field(ge=-1, le=MAX_STAGE)
    answer: Series[str]
    no_answer: Series[bool]
    score: Series[float] = pa.Field(ge=1, le=5, nullable=True)
    judged: Series[int] = pa.Field(ge=0)
    repeats: Series[int] = pa.Field(ge=1)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    type: Series[str]
    indicator_id: Series[str] = pa.Field(str_matches=HEX16)
    skill: Series[str]
    subskill: Series[str]
    indicator: Series[str]

    _order = one_of("order", model_orders, "a registered order or untrained")

    _type = one_of(*_TEST_TYPE)

    class Config:
        strict = True
