"""Sections for the data stages: ``taxonomy`` and ``vocab``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictInt, field_validator

from curll.config.base import Count, PathStr, Section, Stages, unique_sorted


class TaxonomyOutputs(Section):
    indicators: PathStr
    stats: PathStr


class TaxonomyParams(Section):
    """``taxonomy``: which taxonomy the pipeline uses and which stages it keeps."""

    layout: Literal["curll-yaml", "curll-csv"]
    input: PathStr = Field(
        description="a file, or a folder whose *.csv / *.yaml files are read in name order"
    )
    stages: Stages
    per_stage: Count = Field(
        default=0, description="keep a seeded sample of this many indicators per stage; 0 = all"
    )
    seed: StrictInt = 42
    out: TaxonomyOutputs

    _stages = field_validator("stages")(unique_sorted)


class VocabOutputs(Section):
    words: PathStr
    stats: PathStr


class VocabParams(Section):
    """``vocab``: the stage word lists that seed generation."""

    format: Literal["curll-words", "kuperman"]
    input: PathStr
    stages: Stages
    bands: Literal["exclusive", "cumulative"]
    max_per_stage: Count = Field(description="0 = no cap; the paper uses 1000")
    seed: StrictInt
    out: VocabOutputs

    _stages = field_validator("stages")(unique_sorted)
