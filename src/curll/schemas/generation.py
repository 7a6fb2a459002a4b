"""Schemas of the LLM generation stages: templates, seeds, generations and instances.

Every LLM-made row carries its provenance (:class:`Provenance`): the request's content
key, model, backend, sampling params (canonical JSON), prompt file version, a hash of the
rendered prompt, the raw model text, parse status, reject reason and attempts used.
"""

from __future__ import annotations

import pandera.pandas as pa
from pandera.typing import Series

from curll.schemas.data import MAX_STAGE, POS_TAGS

HEX16 = r"^[0-9a-f]{16}$"
SEED_TYPES = ("context", "ir")
TEMPLATE_KINDS = ("context", "instruction")
TASKS = ("context", "ir", "cqa", "csqa")


class Provenance(pa.DataFrameModel):
    """How a row was made. ``reason`` is empty for ``status == "ok"``. ``request_key`` is the
    request's content key (a generate QA row's is combined with its passage's id, as two
    identical passages ask one request: :func:`curll.generate.shard.row_key`)."""

    request_key: Series[str] = pa.Field(str_matches=r"^[0-9a-f]{64}$")
    model: Series[str] = pa.Field(str_length={"min_value": 1})
    backend: Series[str] = pa.Field(isin=["transformers", "openai", "llamacpp", "vllm"])
    sampling: Series[str] = pa.Field(str_startswith="{")
    prompt_version: Series[str] = pa.Field(str_matches=HEX16)
    prompt_hash: Series[str] = pa.Field(str_matches=HEX16)
    raw: Series[str]
    status: Series[str] = pa.Field(isin=["ok", "reject"])
    reason: Series[str]
    attempts: Series[int] = pa.Field(ge=1)


class TemplateSchema(Provenance):
    """``templates.parquet`` (status ok) and ``rejects.parquet``: one text-type format each.

    - kind: "context" (reading passages) or "instruction" (instruction/response pairs);
    - item: position in the model's list (-1 for a request that produced no list);
    - template: the format, e.g. "a letter to a friend" ("" when item is -1).
    """

    indicator_id: Series[str] = pa.Field(str_matches=HEX16)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    kind: Series[str] = pa.Field(isin=list(TEMPLATE_KINDS))
    item: Series[int] = pa.Field(ge=-1)
    template: Series[str]

    class Config:
        strict = True


class SeedSchema(pa.DataFrameModel):
    """``seeds.parquet``: indicator x (word, pos) x type x template, with the indicator's fields.

    seed_id is a hash of (indicator_id, type, template, word, pos): stable across runs and
    across changes to other indicators. type "context" seeds a passage (then CQA and CSQA
    on it); "ir" seeds a standalone instruction/response pair.
    """

    seed_id: Series[str] = pa.Field(unique=True, str_matches=HEX16)
    indicator_id: Series[str] = pa.Field(str_matches=HEX16)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    age_group: Series[str]
    skill: Series[str]
    subskill: Series[str]
    goal: Series[str]
    indicator: Series[str]
    type: Series[str] = pa.Field(isin=list(SEED_TYPES))
    template: Series[str] = pa.Field(str_length={"min_value": 1})
    word: Series[str] = pa.Field(str_length={"min_value": 1})
    pos: Series[str] = pa.Field(isin=list(POS_TAGS))

    class Config:
        strict = True
        ordered = True


class GenerationSchema(Provenance):
    """``generations.parquet`` (and each shard): one row per request of the generate stage.

    task: context | ir | cqa | csqa; parent_id: the context's instance id for cqa/csqa,
    "" otherwise; output: the parsed JSON (canonical) when ok, "" otherwise; token counts
    as reported by the backend.
    """

    task: Series[str] = pa.Field(isin=list(TASKS))
    seed_id: Series[str] = pa.Field(str_matches=HEX16)
    parent_id: Series[str]
    indicator_id: Series[str] = pa.Field(str_matches=HEX16)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    output: Series[str]
    prompt_tokens: Series[int] = pa.Field(ge=0)
    completion_tokens: Series[int] = pa.Field(ge=0)

    class Config:
        strict = True


class _Instance(Provenance):
    instance_id: Series[str] = pa.Field(unique=True, str_matches=HEX16)
    seed_id: Series[str] = pa.Field(str_matches=HEX16)
    indicator_id: Series[str] = pa.Field(str_matches=HEX16)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    template: Series[str]
    word: Series[str]
    pos: Series[str] = pa.Field(isin=list(POS_TAGS))


class ContextSchema(_Instance):
    """``contexts.parquet``: accepted passages (expanded_topic, text)."""

    expanded_topic: Series[str]
    text: Series[str]

    class Config:
        strict = True


class InstructionSchema(_Instance):
    """``ir.parquet``: accepted standalone instruction/response pairs."""

    instruction: Series[str]
    response: Series[str]

    class Config:
        strict = True


class QAPairSchema(_Instance):
    """``cqa.parquet`` / ``csqa.parquet``: one pair per row, linked to its passage by context_id.

    For CSQA, question/answer hold the skill instruction and the child's response;
    q_index is the pair's 1-based position in the model's list.
    """

    context_id: Series[str] = pa.Field(str_matches=HEX16)
    type: Series[str] = pa.Field(isin=["cqa", "csqa"])
    q_index: Series[int] = pa.Field(ge=1)
    question: Series[str]
    answer: Series[str]

    class Config:
        strict = True
