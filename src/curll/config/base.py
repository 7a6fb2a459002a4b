"""Shared building blocks of the params sections."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr

from curll.schemas import MAX_STAGE

Stage = Annotated[StrictInt, Field(ge=0, le=MAX_STAGE)]
# lists in YAML become tuples (hashable, immutable); elements stay strict
Stages = Annotated[tuple[Stage, ...], Field(min_length=1, strict=False)]
PathStr = Annotated[StrictStr, Field(min_length=1)]
Count = Annotated[StrictInt, Field(ge=0)]
Positive = Annotated[StrictInt, Field(ge=1)]
# YAML writes 1 for 1.0: accept ints where a float is meant, never strings
Number = StrictFloat | StrictInt
Share = Annotated[Number, Field(ge=0, le=1)]
#: the least share a stage must keep: one number for every type, or {type: share} (missing: 0)
MinYield = Share | dict[StrictStr, Share]


class Section(BaseModel):
    """A frozen params section: unknown keys and wrong types are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


def unique_sorted(stages: tuple[int, ...]) -> tuple[int, ...]:
    if len(set(stages)) != len(stages):
        raise ValueError(f"stages must not repeat, got {list(stages)}")
    return tuple(sorted(stages))
