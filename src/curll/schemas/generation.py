"""Schemas of the LLM generation stages: templates, seeds, generations and instances.

Every LLM-made row carries its provenance (:class:`Provenance`): the request's content
key, model, backend, sampling params (canonical JSON), prompt file version, a hash of the
rendered prompt, the raw model text, parse status, reject reason and attempts used.

An instance type's table schema is made from its spec (:func:`instance_schema`, after
:mod:`curll.instances`); the ``type`` and ``task`` columns are checked against the registry
when a table is checked.
"""

from __future__ import annotations

import functools

import pandera.pandas as pa
from pandera.typing import Series

from curll import instances
from curll.instances import InstanceType
from curll.schemas.data import HEX16, MAX_STAGE, POS_TAGS, one_of


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

    - kind: a template kind a seeded instance type draws from (:mod:`curll.instances`):
      "context" (reading passages) or "instruction" (instruction/response pairs);
    - item: position in the model's list (-1 for a request that produced no list);
    - template: the format, e.g. "a letter to a friend" ("" when item is -1).
    """

    indicator_id: Series[str] = pa.Field(str_matches=HEX16)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    kind: Series[str]
    item: Series[int] = pa.Field(ge=-1)
    template: Series[str]

    _kind = one_of("kind", instances.template_kinds, "a template kind of a seeded instance type")

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
    type: Series[str]
    template: Series[str] = pa.Field(str_length={"min_value": 1})
    word: Series[str] = pa.Field(str_length={"min_value": 1})
    pos: Series[str] = pa.Field(isin=list(POS_TAGS))

    _type = one_of("type", instances.seeded, "a seeded instance type")

    class Config:
        strict = True
        ordered = True


class GenerationSchema(Provenance):
    """``generations.parquet`` (and each shard): one row per request of the generate stage.

    task: an instance type (context | ir | cqa | csqa); parent_id: the passage's instance id
    for a type made on one (cqa, csqa), "" otherwise; output: the parsed JSON (canonical) when
    ok, "" otherwise; token counts as reported by the backend.
    """

    task: Series[str]
    seed_id: Series[str] = pa.Field(str_matches=HEX16)
    parent_id: Series[str]
    indicator_id: Series[str] = pa.Field(str_matches=HEX16)
    stage: Series[int] = pa.Field(ge=0, le=MAX_STAGE)
    output: Series[str]
    prompt_tokens: Series[int] = pa.Field(ge=0)
    completion_tokens: Series[int] = pa.Field(ge=0)

    _task = one_of("task", instances.names, "an instance type")

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


@functools.cache
def _schema(kind: InstanceType) -> type[pa.DataFrameModel]:
    annotations: dict[str, object] = {}
    fields: dict[str, object] = {}
    if kind.on:  # linked to its passage, and numbered within its list
        annotations |= {kind.link: Series[str], "type": Series[str], "q_index": Series[int]}
        fields |= {kind.link: pa.Field(str_matches=HEX16), "type": pa.Field(isin=[kind.name]),
                   "q_index": pa.Field(ge=1)}  # fmt: skip
    annotations |= dict.fromkeys(kind.columns, Series[str])
    doc = (f"The ``{kind.name}`` table: {kind.title}, one instance a row, with its text columns "
           f"{', '.join(kind.columns)}"
           + (f"; ``{kind.link}`` names its passage and ``q_index`` its 1-based place in the model's "
              "list" if kind.on else "") + ".")  # fmt: skip
    config = type("Config", (), {"strict": True})
    namespace = {"__annotations__": annotations, "__doc__": doc, "__module__": __name__, "Config": config}
    return type(f"{kind.name.capitalize()}Schema", (_Instance,), {**namespace, **fields})


def instance_schema(name: str) -> type[pa.DataFrameModel]:
    """The table schema of instance type ``name`` (:mod:`curll.instances`): the columns every
    instance has, then, for a type made on a passage, the link to it (``<on>_id``), ``type`` and
    ``q_index``, then its text columns."""
    return _schema(instances.spec(name))
