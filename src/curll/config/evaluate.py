"""The ``evaluate`` section: inference on the test sets, the judge panel, metrics and report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StrictStr, field_validator, model_validator

from curll import instances
from curll.config.base import (
    Count,
    MinYield,
    ParamsError,
    PathStr,
    Positive,
    Registered,
    Section,
    Seed,
    Stages,
    unique_sorted,
)
from curll.config.llm import SamplingParams
from curll.config.train import Order
from curll.layouts import LAYOUTS
from curll.orders import run_name

_TEST_TYPE = Registered("test type", instances.evaluated)
#: a test type: an evaluated instance type of :mod:`curll.instances` (ir, cqa, csqa)
TestType = Annotated[StrictStr, AfterValidator(_TEST_TYPE.check), _TEST_TYPE]


class InferParams(Section):
    """How trained models answer: the paper samples at temperature 0.7, top-p 0.95, 128 tokens.

    prompt_tokens: the longest prompt (chat template included); a longer one loses the end
    of its passage, never the question or the assistant marker.
    """

    backend: Literal["transformers", "vllm"]
    device: Literal["auto", "cpu", "cuda"]
    dtype: Literal["auto", "float32", "bfloat16", "float16"]
    batch_size: Positive
    prompt_tokens: Positive
    sampling: SamplingParams


class LossParams(Section):
    """The judge-free measure: each model's NLL of the reference answers (no LLM).

    splits: which splits of every stage are scored (the matrices use ``test``; ``validation``
    is kept beside it). micro_batch: rows of ``train.context`` per forward pass (memory).
    """

    splits: Annotated[tuple[Literal["test", "validation"], ...], Field(min_length=1, strict=False)]
    micro_batch: Positive


class BootstrapParams(Section):
    """95% intervals of every matrix cell and CL metric: ``samples`` bootstrap replicates over
    test items (0: none), drawn with ``seed``."""

    samples: Count
    seed: Seed


class ControlsParams(Section):
    """Control items every judge rates beside the answers: for a seeded sample of ``per_type``
    of the test items the models answer, of each stage and type (so at most ``max_per_type``),
    the reference answer, another item's reference (a mismatch), an empty answer and the
    reference's words shuffled (``seed``: the sample, the mismatch partner and the shuffle)."""

    per_type: Positive
    seed: Seed


class RubricParams(Section):
    """Multi-criteria rating (vocabulary, concepts, correctness, clarity, completeness)."""

    enabled: bool
    prompt: PathStr


_LAYOUT = Registered("layout", LAYOUTS.names)
#: a chat layout of :mod:`curll.evaluate.layouts` (curll | curll-hub)
LayoutName = Annotated[StrictStr, AfterValidator(_LAYOUT.check), _LAYOUT]


def _inside(path: str) -> str:
    """A checkpoint's path stays under ``dir``, the folder DVC tracks: a change to a checkpoint
    elsewhere would not rerun the evaluate stages."""
    if Path(path).is_absolute() or ".." in Path(path).parts:
        raise ValueError(f"must be a path under evaluate.checkpoints.dir (which DVC tracks), not {path!r}")
    return path


class Checkpoint(Section):
    """A model curll did not train: the Hugging Face folder ``path`` (under
    ``evaluate.checkpoints.dir``) of an ``order`` run that has seen ``stages`` (continual and
    joint after stage 2: [0, 1, 2]; independent of stage 2: [2]), asked and scored in ``layout``
    with its own tokenizer; ``seed``: its training seed, as the intervals pair models by seed."""

    order: Order
    stages: Annotated[Stages, AfterValidator(unique_sorted)]
    path: Annotated[PathStr, AfterValidator(_inside)]
    seed: Seed = 0
    layout: LayoutName = "curll-hub"

    @property
    def name(self) -> str:
        """The run name, as curll's own models are named: ``seed-0/continual/0-1-2``."""
        return run_name(self.seed, self.order, self.stages)


class CheckpointsParams(Section):
    """Checkpoints to evaluate in place of the train stage's models (:class:`Checkpoint` each,
    their paths relative to ``dir``, the folder DVC tracks as their dependency). Empty
    ``models``: the trained models are scored."""

    dir: PathStr = Field(default="checkpoints", description="the folder holding them (a DVC dep)")
    models: tuple[Checkpoint, ...] = Field(
        default=(),
        strict=False,
        description="each {order, stages (seen), path (under dir), seed: 0, layout: curll-hub | curll}",
    )

    @field_validator("models")
    @classmethod
    def _distinct(cls, v: tuple[Checkpoint, ...]) -> tuple[Checkpoint, ...]:
        names = [c.name for c in v]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"two checkpoints of the same run {twice[0]} (order, stages and seed)")
        return v


class EvaluateOutputs(Section):
    losses: PathStr
    items: PathStr
    answers: PathStr
    panel: PathStr  # a folder: <judge>/ratings.parquet and rubric.parquet, one judge a stage
    ratings: PathStr
    rubric: PathStr
    judges: PathStr
    scores: PathStr
    metrics: PathStr
    matrices: PathStr
    plots: PathStr
    headline: PathStr = "data/evaluate/headline"  # a folder: the DVC metrics, <order>.json, judge.json
    curves: PathStr = "data/evaluate/curves"  # a folder: <order>.csv, every model's training loss
    report: PathStr


class EvaluateParams(Section):
    """``evaluate``: which test items, how models answer, who judges.

    max_per_type: test items per stage and type, a seeded sample (0: all; the paper: all).
    untrained: also answer with an untrained model of the preset (baseline of zero-shot FWT),
    one per seed like the trained models.
    judge_seeds: the models of the first ``judge_seeds`` of ``train.seeds`` answer the test items
    and are judged (answers and judging cost LLM time); the judge-free loss scores every seed.
    repeats: every model answers every item ``repeats`` times (repeat r samples with
    ``infer.sampling.seed + r``) and every judge rates repeat r's answer with its profile's seed
    + r; an item's score is the mean over its repeats, so the intervals over items carry answer
    and judge sampling noise (1: one answer and one rating, as before).
    judges: ``llm.profiles`` names; every judge rates every answer, the score of an answer is
    the mean of the ratings that parsed. explain: each rating also gets the judge's reason in
    a sentence (stored in the ratings table, read by no metric: off by default, as it costs
    more tokens than the rating itself).
    """

    types: Annotated[tuple[TestType, ...], Field(min_length=1, strict=False)]
    max_per_type: Count
    seed: Seed
    untrained: bool
    judge_seeds: Positive = Field(
        description="the models of the first k train.seeds answer and are judged (the loss: every seed)"
    )
    repeats: Positive = Field(default=1, description="answers per item and model (and ratings per answer)")
    infer: InferParams
    loss: LossParams
    bootstrap: BootstrapParams
    min_items: Positive = Field(description="least scored test records per trained stage and type")
    accept_gaps: bool = Field(description="report stages and types under min_items instead of stopping")
    checkpoints: CheckpointsParams = Field(default_factory=CheckpointsParams)
    judges: Annotated[tuple[StrictStr, ...], Field(min_length=1, strict=False)]
    explain: bool = Field(description="judges write a one-sentence reason after the rating")
    min_yield: MinYield = Field(description="least share of a judge's ratings that parse (by judge name)")
    prompts: dict[TestType, PathStr]
    controls: ControlsParams
    rubric: RubricParams
    out: EvaluateOutputs

    @field_validator("judges")
    @classmethod
    def _distinct(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(v)) != len(v):
            raise ValueError(f"judges must not repeat, got {list(v)}")
        return v

    @model_validator(mode="after")
    def _controls_are_answered_items(self) -> EvaluateParams:
        if self.max_per_type and self.controls.per_type > self.max_per_type:
            why = (f"{self.controls.per_type} is more than evaluate.max_per_type ({self.max_per_type}): "
                   "the controls are drawn from the test items the models answer")  # fmt: skip
            raise ParamsError(("controls.per_type", why))
        return self

    @model_validator(mode="after")
    def _judged_types_have_prompts(self) -> EvaluateParams:
        missing = [t for t in self.types if t not in self.prompts]
        if missing:
            why = f"no judge prompt for the test type {missing[0]!r} of evaluate.types"
            raise ParamsError(("prompts", why))
        return self
