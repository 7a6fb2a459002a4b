"""Sections for the LLM stages: skill_graph, templates, seeds, generate, generate_merge."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StrictStr, model_validator

from curll import instances
from curll.config.base import (
    ByProfile,
    Count,
    KeysOf,
    MinYield,
    ParamsError,
    PathStr,
    Positive,
    Registered,
    Section,
    Seed,
    TablesFolder,
    YieldKeys,
    no_credentials,
)

_SEEDED = KeysOf("seeded instance type", instances.seeded)
_LISTED = KeysOf("instance type asked for a list", instances.listed)
_TYPES = KeysOf("instance type", instances.names)
_KIND = Registered("template kind", instances.template_kinds)
#: a template kind a seeded instance type draws from (:func:`curll.instances.template_kinds`)
TemplateKind = Annotated[StrictStr, AfterValidator(_KIND.check), _KIND]
_EDGE_YIELD = YieldKeys("skill_graph yield type", lambda: ("edge",))
_KIND_YIELD = YieldKeys("template kind", instances.template_kinds)
_TASK_YIELD = YieldKeys("instance type", instances.names)


class SkillGraphPrompts(Section):
    edge: PathStr
    weight: PathStr


class SkillGraphOutputs(Section):
    edges: PathStr
    graphml: PathStr
    graph_json: PathStr
    stats: PathStr


class SkillGraphParams(Section):
    """``skill_graph``: which indicator pairs are asked about, and where the graph goes.

    candidates: ``all`` (every pair: n(n-1)/2 requests), ``related`` (same skill), or
    ``nearest`` (each indicator's ``neighbours`` most similar indicators by TF-IDF cosine);
    ``related`` and ``nearest`` keep only pairs whose stages differ by <= ``max_stage_gap``.
    """

    candidates: Literal["all", "related", "nearest"]
    neighbours: Positive
    max_stage_gap: Count
    min_yield: Annotated[MinYield, AfterValidator(_EDGE_YIELD.check)] = Field(
        description="least share of pair requests answered validly (type: edge)"
    )
    prompts: SkillGraphPrompts
    out: SkillGraphOutputs


class TemplatesOutputs(Section):
    templates: PathStr
    rejects: PathStr
    stats: PathStr


class DictionaryCheck(ByProfile[bool]):
    default: bool = True  # the check is on unless a profile (or ``default``) turns it off


class TemplatesParams(Section):
    """``templates``: text-type formats per indicator and kind (paper: 15-20 of 2-5 words)."""

    kinds: Annotated[tuple[TemplateKind, ...], Field(min_length=1, strict=False)]
    min_items: Positive
    max_items: Positive
    min_words: Positive
    max_words: Positive
    min_yield: Annotated[MinYield, AfterValidator(_KIND_YIELD.check)] = Field(
        description="least share of (indicator, kind) sets accepted, per kind"
    )
    attempts: Positive = Field(
        default=6, description="tries per set (short answers: cheap), not llm.attempts"
    )
    dictionary: DictionaryCheck = Field(
        default_factory=lambda: DictionaryCheck(),
        description="every format word must be in the dictionary (random weights write no English words)",
    )
    prompt: PathStr
    out: TemplatesOutputs

    @model_validator(mode="after")
    def _ranges(self) -> TemplatesParams:
        if self.min_items > self.max_items or self.min_words > self.max_words:
            raise ValueError("min_items <= max_items and min_words <= max_words are required")
        return self


class SeedsOutputs(Section):
    seeds: PathStr
    stats: PathStr


class SeedsParams(Section):
    """``seeds``: ``sample`` draws ``per_indicator`` seeds per type from the indicator's
    word x template cross product; ``full`` keeps the whole cross product (the paper)."""

    mode: Literal["sample", "full"]
    per_indicator: Annotated[dict[StrictStr, Count], AfterValidator(_SEEDED.check), _SEEDED] = Field(
        description="seeds drawn per indicator, for every seeded instance type (mode sample)"
    )
    seed: Seed
    out: SeedsOutputs

    @model_validator(mode="after")
    def _some_seed(self) -> SeedsParams:
        if self.mode == "sample" and not any(self.per_indicator.values()):
            raise ParamsError(("per_indicator", "every type is 0: mode sample would draw no seed at all"))
        return self


class GenerateOutputs(Section):
    shards: PathStr = Field(description="folder of generations-<i>-of-<n>.parquet files")


class GenerateParams(Section):
    """``generate``: every seeded instance type from its seeds (passages, IR), then every type
    made on a passage (CQA, CSQA) on each accepted passage, ``pairs[type]`` items a request.

    ``ray_address`` holds no credential (user info, a key-like query parameter): it is refused."""

    shards: Positive = Field(description="n: the seeds are split into n shards by a hash of seed_id")
    runner: Literal["local", "ray"] = Field(
        default="local", description="local: the shards in turn in this process | ray: one Ray task per shard"
    )
    ray_address: Annotated[
        StrictStr | None,
        AfterValidator(no_credentials("give Ray's credentials through its environment, not params")),
    ] = Field(
        default=None,
        description='ray: None starts Ray on this machine; "auto" joins the cluster of `ray start`',
    )
    pairs: Annotated[dict[StrictStr, Positive], AfterValidator(_LISTED.check), _LISTED] = Field(
        description="items asked for in one request, for every instance type asked for a list (cqa, csqa)"
    )
    min_yield: Annotated[MinYield, AfterValidator(_TASK_YIELD.check)] = Field(
        description="least share of requests answered validly, per task and stage"
    )
    prompts: Annotated[dict[StrictStr, PathStr], AfterValidator(_TYPES.check), _TYPES] = Field(
        description="the prompt file of every instance type"
    )
    out: GenerateOutputs


class GenerateMergeOutputs(TablesFolder):
    generations: PathStr
    stats: PathStr


class GenerateMergeParams(Section):
    """``generate_merge``: all shards -> one generations table and the typed instance tables."""

    out: GenerateMergeOutputs
