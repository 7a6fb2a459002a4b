"""Typed, frozen, validated params: ``params.yaml`` loaded once per run.

One section per DVC stage, each a frozen pydantic model with ``extra="forbid"``:
an unknown key, a wrong type (no silent coercion: ``"5"`` is not an int) or an
out-of-range value raises :class:`CurllError` naming the file and the dotted key,
e.g. ``params.yaml, field 'vocab.max_per_stage': must be >= 0 (got -1)``.

Paths (inputs and outputs) live here too, so ``dvc.yaml`` templating (``${...}``) and
the stage code read the same single definition.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError, field_validator

from curll.errors import CurllError
from curll.schemas import MAX_STAGE

DEFAULT_PARAMS = Path("params.yaml")

Stage = Annotated[StrictInt, Field(ge=0, le=MAX_STAGE)]
# lists in YAML become tuples (hashable, immutable); elements stay strict
Stages = Annotated[tuple[Stage, ...], Field(min_length=1, strict=False)]
PathStr = Annotated[StrictStr, Field(min_length=1)]


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


def _unique_sorted(stages: tuple[int, ...]) -> tuple[int, ...]:
    if len(set(stages)) != len(stages):
        raise ValueError(f"stages must not repeat, got {list(stages)}")
    return tuple(sorted(stages))


class TaxonomyOutputs(_Section):
    indicators: PathStr
    stats: PathStr


class TaxonomyParams(_Section):
    """``taxonomy``: which taxonomy the pipeline uses and which stages it keeps."""

    layout: Literal["curll-yaml", "curll-csv"]
    input: PathStr = Field(
        description="a file, or a folder whose *.csv / *.yaml files are read in name order"
    )
    stages: Stages
    out: TaxonomyOutputs

    _stages = field_validator("stages")(_unique_sorted)


class VocabOutputs(_Section):
    words: PathStr
    stats: PathStr


class VocabParams(_Section):
    """``vocab``: the stage word lists that seed generation."""

    format: Literal["curll-words", "kuperman"]
    input: PathStr
    stages: Stages
    bands: Literal["exclusive", "cumulative"]
    max_per_stage: Annotated[StrictInt, Field(ge=0)] = Field(description="0 = no cap; the paper uses 1000")
    seed: StrictInt
    out: VocabOutputs

    _stages = field_validator("stages")(_unique_sorted)


class Params(_Section):
    """The whole ``params.yaml``."""

    taxonomy: TaxonomyParams
    vocab: VocabParams


def parse_params(data: Any, *, source: str | Path = DEFAULT_PARAMS) -> Params:
    """Validate an already-loaded mapping; errors name ``source`` and the dotted key."""
    if not isinstance(data, dict):
        raise CurllError("params must be a mapping of stage sections", file=source)
    try:
        return Params.model_validate(data)
    except ValidationError as exc:
        raise _to_curll_error(exc, source) from None


def load_params(path: str | Path = DEFAULT_PARAMS) -> Params:
    """Read and validate ``path`` (YAML)."""
    p = Path(path)
    if not p.is_file():
        raise CurllError("params file not found", file=p)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise CurllError(f"invalid YAML: {exc}", file=p, row=mark.line + 1 if mark else None) from None
    return parse_params(data, source=p)


def _to_curll_error(exc: ValidationError, source: str | Path) -> CurllError:
    problems = []
    for err in exc.errors():
        key = ".".join(str(part) for part in err["loc"])
        kind = err["type"]
        if kind == "extra_forbidden":
            msg = "unknown key (a typo? see params.yaml's documented keys)"
        elif kind == "missing":
            msg = "required key is missing"
        else:
            msg = f"{err['msg']} (got {err.get('input')!r})"
        problems.append((key, msg))
    key, msg = problems[0]
    if len(problems) > 1:
        msg += "".join(f"\n  - {k}: {m}" for k, m in problems[1:])
    return CurllError(msg, file=source, field=key)
