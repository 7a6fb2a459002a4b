"""Sections for training: tokenizer and train."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    StrictBool,
    StrictStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from curll import orders as order_specs
from curll.config.base import (
    Count,
    Number,
    PathStr,
    Positive,
    Registered,
    Section,
    Seed,
    Stages,
    unique_sorted,
)

Unit = Annotated[Number, Field(ge=0, le=1)]
#: an Adam beta: a moving average's decay, below 1 (torch refuses 1: nothing would be averaged)
Beta = Annotated[Number, Field(ge=0, lt=1)]
_ORDER = Registered("order", order_specs.names)
#: a training order: a name of :data:`curll.orders.ORDERS`
Order = Annotated[StrictStr, AfterValidator(_ORDER.check), _ORDER]


class TokenizerOutputs(Section):
    dir: PathStr
    stats: PathStr


class TokenizerParams(Section):
    """``tokenizer``: ``local`` trains a byte-level BPE (ChatML specials) on the train records;
    ``hub`` loads ``name`` with ``AutoTokenizer`` (it must know the ChatML tokens) and gives it
    curll's ChatML chat template, the text training encodes."""

    source: Literal["local", "hub"]
    name: StrictStr
    vocab_size: Annotated[int, Field(ge=300, le=262144, strict=True)]
    out: TokenizerOutputs


class OptimParams(Section):
    """AdamW and the learning-rate schedule. The paper's Appendix C: lr 5e-3, betas (0.9, 0.98),
    eps 1e-8, weight decay 0.01, clip 1.0; the default params differ where the small slice
    trains better otherwise (see ``params.yaml``).

    schedule: ``constant`` (after warmup), ``cosine`` (to ``min_lr_ratio * lr``), or ``wsd``
    (warmup-stable-decay: linear decay over the last ``decay`` fraction of steps).
    rewarm: for the orders that carry their ``schedule`` (continual; a run of an order from
    scratch is one run, one schedule). ``true``: the schedule, warm-up included, starts again at
    each stage and spans that stage's steps; ``false``: one schedule spans the whole sequence of
    a seed (every stage's steps, in order), so a later stage goes on where the previous one stopped.
    """

    lr: Annotated[Number, Field(gt=0)]
    beta1: Beta
    beta2: Beta
    eps: Annotated[Number, Field(gt=0)]
    weight_decay: Annotated[Number, Field(ge=0)]
    clip: Annotated[Number, Field(ge=0)]
    schedule: Literal["constant", "cosine", "wsd"]
    warmup: Unit
    decay: Unit
    min_lr_ratio: Unit
    rewarm: StrictBool = Field(default=True, description="continual: the schedule restarts at each stage")


class ContinualParams(Section):
    optimizer: Literal["reset", "carry"] = Field(description="AdamW state at a new stage")
    replay: Unit = Field(description="earlier stages' train records added, a fraction of the stage's records")


class StrategyParams(Section):
    """The continual-learning strategies, orders of :mod:`curll.orders` that add a technique to
    continual (each otherwise as ``train.continual``): ``replay`` (continual-replay: train records
    of earlier stages added to each stage's, as a share of its records, drawn with the run's seed);
    ``warmup``, ``min_lr_ratio`` and ``optimizer`` (continual-rewarm: within every stage the
    learning rate rises linearly over ``warmup`` of its steps to ``optim.lr``, then follows a
    cosine to ``min_lr_ratio`` x ``optim.lr``; AdamW's state at a new stage carried or reset);
    ``ewc`` (continual-ewc: the strength lambda of the penalty lambda x sum over finished stages
    of sum_i F_i (w_i - w*_i)^2, with w* a finished stage's weights and F the mean over its train
    batches (``batch`` rows; ``micro_batch`` only splits their passes) of the squared gradient of
    the batch loss, as Avalanche's EWCPlugin, separate mode).
    Replay and rewarm together: continual-replay-rewarm."""

    replay: Annotated[Number, Field(gt=0, le=1)] = 0.25
    warmup: Unit = 0.1
    min_lr_ratio: Unit = 0.1
    optimizer: Literal["reset", "carry"] = "carry"
    ewc: Annotated[Number, Field(ge=0)] = 10000.0


class TrainOutputs(Section):
    models: PathStr
    checkpoints: PathStr
    metrics: PathStr
    plots: PathStr


class TrainParams(Section):
    """``train``: which models, on what data, how.

    order: an order of :mod:`curll.orders` (``independent``: M_k from scratch on stage k;
    ``joint``: M_0..k from scratch on the shuffled union of stages 0..k; ``continual``: M_0-..-k
    continues from M_0-..-(k-1)), or a list of them (all trained, one after the other).
    seeds: every order is trained once per seed (the model's initial weights and the order of
    its data); evaluation averages over seeds and resamples them for its intervals.
    batch: packed rows of ``context`` tokens per optimizer step, reached with ``micro_batch``
    rows per forward pass and gradient accumulation (split over ``processes`` under DDP). A row
    holds several records, so this is not the paper's batch of 1,536, which counts records
    (instances): the paper's equals ``1536 / documents_per_row`` rows, and every run's
    ``records_per_step`` (``batch x documents_per_row``) is in the train metrics.
    budget: the compute each run gets (:class:`curll.train.runs.Budget`). ``data``: every run makes
    ``epochs`` passes over its own packed rows, so the orders get unequal steps. ``steps``: every
    stage k is given S_k optimizer steps of ``batch`` full rows, the same for every order:
    independent M_k trains S_k steps on stage k, continual trains S_k steps at stage k (its replay
    rows included), joint M_0..k trains S_0 + ... + S_k steps on a seeded mixture holding exactly
    S_j x ``batch`` rows of each stage j. Rows are cut or repeated (further seeded passes) to fill
    the steps. The rule: S_k = ``steps_per_stage`` when > 0, else the same S for every stage,
    ceil(``epochs`` x R / ``batch``) with R the packed train rows of the largest of ``stages``
    (one ``epochs`` pass over it). ``steps_per_stage`` > 0 needs ``budget: steps``.
    """

    order: Order | Annotated[tuple[Order, ...], Field(min_length=1, strict=False)]
    stages: Stages
    preset: StrictStr
    init: Literal["kaiming", "normal"] = Field(
        default="kaiming",
        description="kaiming: the paper's; normal: std 0.02, residual outputs scaled by depth",
    )
    context: Positive
    loss: Literal["assistant", "all"]
    batch: Positive
    micro_batch: Positive
    epochs: Positive
    budget: Literal["data", "steps"] = Field(
        default="data", description="data: epochs passes over each run's rows; steps: S_k steps per stage"
    )
    steps_per_stage: Count = Field(
        default=0, description="budget steps: optimizer steps per stage (0: epochs over the largest stage)"
    )
    seeds: Annotated[tuple[Seed, ...], Field(min_length=1, strict=False)] = Field(
        description="each order is trained once per seed (init and data order)"
    )
    processes: Positive = Field(description="DDP processes on this machine (1 per GPU); 1: no DDP")
    device: Literal["auto", "cpu", "cuda"]
    dtype: Literal["auto", "bf16", "fp32"]
    checkpoint_every: Positive
    compile: StrictBool = Field(default=False, description="torch.compile the decoder layers (for GPUs)")
    loss_chunk: Count = Field(
        default=0, description="positions per chunk of the output layer and loss (0: all at once)"
    )
    log_every: Positive
    optim: OptimParams
    continual: ContinualParams
    strategies: StrategyParams = Field(
        default_factory=lambda: StrategyParams(), description="the continual-learning strategies' settings"
    )
    out: TrainOutputs

    _stages = field_validator("stages")(classmethod(lambda cls, v: unique_sorted(v)))

    @field_validator("preset")
    @classmethod
    def _preset(cls, v: str) -> str:
        from curll.model.config import preset

        try:
            preset(v)
        except KeyError as exc:  # its message names the known presets
            raise ValueError(exc.args[0]) from None
        return v

    @field_validator("seeds", "order")
    @classmethod
    def _no_repeats(cls, v: Any, info: ValidationInfo) -> Any:
        if not isinstance(v, str) and len(set(v)) != len(v):  # refused, not silently dropped
            raise ValueError(f"{info.field_name} must not repeat")
        return v

    @property
    def orders(self) -> tuple[str, ...]:
        return (self.order,) if isinstance(self.order, str) else tuple(self.order)

    @model_validator(mode="after")
    def _batch(self) -> TrainParams:
        if self.batch % self.micro_batch:
            raise ValueError(f"batch ({self.batch}) must be a multiple of micro_batch ({self.micro_batch})")
        if (self.batch // self.micro_batch) % self.processes:
            raise ValueError(
                f"batch / micro_batch ({self.batch // self.micro_batch}) must be a multiple of"
                f" processes ({self.processes}): every process takes the same share of a step"
            )
        return self

    @field_validator("steps_per_stage")
    @classmethod
    def _steps_per_stage(cls, v: int, info: ValidationInfo) -> int:
        budget = info.data.get("budget")  # None: budget itself is invalid (its own error)
        if v and budget not in (None, "steps"):
            raise ValueError(f"steps_per_stage ({v}) is for budget: steps, not budget: {budget}")
        return v


__all__ = ["ContinualParams", "Count", "OptimParams", "StrategyParams", "TokenizerParams", "TrainParams"]
