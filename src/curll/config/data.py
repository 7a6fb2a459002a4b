"""Sections for the data stages: ``taxonomy`` and ``vocab``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictStr, field_validator, model_validator

from curll.config.base import Count, PathStr, Section, Seed, Stage, Stages, unique_sorted


class TaxonomyOutputs(Section):
    indicators: PathStr
    stats: PathStr


class TaxonomyColumns(Section):
    """``taxonomy.columns`` (layout ``table``): the header of each part of an indicator.

    Name ``indicator`` and ``grade`` for a table of one indicator a row; leave both out when
    the grades are columns (``taxonomy.grades`` then maps their headers)."""

    skill: StrictStr
    goal: StrictStr
    subskill: StrictStr | None = Field(
        default=None, description="none: an indicator's sub-skill is its skill"
    )
    indicator: StrictStr | None = None
    grade: StrictStr | None = None


class TaxonomyParams(Section):
    """``taxonomy``: which taxonomy the pipeline uses and which stages it keeps.

    ``duplicates``: an indicator repeated under one stage, skill, sub-skill and goal stops the
    import (``error``) or is left out, named and counted (``drop``). ``columns`` and ``grades``
    describe a curriculum in your own shape (layout ``table``): ``grades`` maps a grade (a
    value of the grade column, or a grade column's header) to a stage, or to null to leave it out.
    """

    layout: Literal["curll-yaml", "curll-csv", "table"]
    input: PathStr = Field(
        description="a file, or a folder whose *.csv / *.yaml files are read in name order"
    )
    stages: Stages
    per_stage: Count = Field(
        default=0, description="keep a seeded sample of this many indicators per stage; 0 = all"
    )
    seed: Seed = 42
    duplicates: Literal["error", "drop"] = "error"
    columns: TaxonomyColumns | None = None
    grades: dict[str, Stage | None] | None = None
    out: TaxonomyOutputs

    _stages = field_validator("stages")(unique_sorted)

    @field_validator("grades", mode="before")
    @classmethod
    def _grade_keys_are_text(cls, value: Any) -> Any:
        """YAML reads ``1: 1`` with an int key; a grade is matched as text."""
        return {str(k): v for k, v in value.items()} if isinstance(value, dict) else value

    @model_validator(mode="after")
    def _table_needs_columns(self) -> TaxonomyParams:
        table = self.layout == "table"
        if table and (self.columns is None or not self.grades):
            raise ValueError("layout table needs taxonomy.columns and taxonomy.grades")
        if not table and (self.columns is not None or self.grades is not None):
            raise ValueError(f"taxonomy.columns and taxonomy.grades are for layout table, not {self.layout}")
        if self.columns is not None and (self.columns.indicator is None) != (self.columns.grade is None):
            raise ValueError("taxonomy.columns: name both indicator and grade (one a row), or neither")
        return self


class VocabOutputs(Section):
    words: PathStr
    stats: PathStr


class VocabParams(Section):
    """``vocab``: the stage word lists that seed generation."""

    format: Literal["curll-words", "kuperman"]
    input: PathStr
    stages: Stages
    bands: Literal["exclusive", "cumulative"]
    dedup: Literal["lemma_row", "first_row"] = Field(
        default="lemma_row",
        description="kuperman, a repeated (lemma, AoA): keep the lemma's own row or the first (the authors')",
    )
    max_per_stage: Count = Field(description="0 = no cap; the paper uses 1000")
    seed: Seed
    out: VocabOutputs

    _stages = field_validator("stages")(unique_sorted)
