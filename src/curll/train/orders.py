"""The training orders (:mod:`curll.orders`, one spec each) as a plan of runs.

:func:`plan` reads an order's spec: a run per stage k of ``stages``, from scratch or from the
previous run's final weights (``start``), on stage k's rows or on the union of the stages up
to k (``data``), with a replay sample of earlier stages where the order carries ``replay``.
The paper's three: independent (M_k from scratch on stage k), joint (M_0..k from scratch on
the shuffled union of stages up to k), continual (M_0-..-k from M_0-..-(k-1), on stage k).

A run's ``name`` is ``seed-<seed>/<order>/<stages it has seen joined by "-">``
(``seed-42/independent/2``, ``seed-42/joint/0-1-2``, ``seed-7/continual/0-1-2``): the folder its
model is saved under (:func:`saved_models` reads the folders back), and how evaluation tells
models apart. Every order is planned once per seed, and a run that starts from a previous one
starts from the previous run of its own seed. ``trained_to`` is the last stage the model has seen.

Every run that starts from scratch starts from :func:`untrained_model` of its seed, which is
also the untrained baseline the evaluation scores (:func:`untrained` names its entry).

Compute (``train.budget``, the rule in :class:`curll.config.train.TrainParams`): under ``steps``
stage k gets :func:`stage_steps` S_k optimizer steps in every order, and :func:`budget_order`
lays out the rows a run trains on; :func:`spent` counts what a run trained on, per stage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from curll.orders import SEED_PREFIX, run_name, seed_prefix, spec
from curll.schemas.evaluate import UNTRAINED

if TYPE_CHECKING:
    from curll.config.train import TrainParams
    from curll.model.llama import CausalLM
    from curll.train.data import Parts


@dataclass(frozen=True)
class Run:
    name: str
    order: str  # a name of curll.orders.ORDERS
    seed: int  # the model's initial weights and its data order
    data_stages: tuple[int, ...]  # stages whose train rows this run trains on
    replay_stages: tuple[int, ...]  # earlier stages sampled for replay (orders that carry replay)
    init_from: str | None  # the run whose final weights this one starts from

    @property
    def trained_to(self) -> int:
        return self.data_stages[-1]


def plan(order: str, stages: tuple[int, ...], *, seed: int, replay: float = 0.0) -> list[Run]:
    """The runs of ``order`` (its :class:`~curll.orders.OrderSpec`), one per stage of ``stages``;
    ``replay`` > 0: each run of an order that carries replay samples the stages before its own."""
    o = spec(order)
    runs: list[Run] = []
    for i, k in enumerate(stages):
        name = run_name(seed, order, o.seen(stages, i))
        data = (k,) if o.data == "stage" else tuple(stages[: i + 1])
        replays = tuple(stages[:i]) if "replay" in o.carries and replay > 0 else ()
        prev = runs[-1].name if runs and o.start == "previous" else None
        runs.append(Run(name, order, seed, data, replays, prev))
    return runs


class SavedModel(NamedTuple):
    """A model the evaluate stages score: a folder the train stage wrote, or an untrained model."""

    name: str  # the run: seed-42/continual/0-1, seed-42/untrained
    order: str  # independent | joint | continual | untrained
    seen: tuple[int, ...]  # the stages it learned from, as its run is named (OrderSpec.seen); () untrained
    seed: int
    folder: Path
    layout: str = "curll"  # how it is asked and scored (:mod:`curll.evaluate.layouts`)

    @property
    def trained_to(self) -> int:
        """The last stage trained; -1 untrained."""
        return self.seen[-1] if self.seen else -1


def saved_models(root: str | Path, seeds: Sequence[int] | None = None) -> list[SavedModel]:
    """The model folders under ``root`` as the train stage lays them out,
    ``seed-<seed>/<order>/<stages, e.g. 0-1-2>``, sorted by seed, order and stages; ``seeds``:
    only the models of these seeds."""
    found = []
    for config in Path(root).glob(f"{SEED_PREFIX}*/*/*/config.json"):
        f = config.parent
        seed = int(f.parent.parent.name.removeprefix(SEED_PREFIX))
        if seeds is None or seed in seeds:
            found.append(SavedModel(f"{f.parent.parent.name}/{f.parent.name}/{f.name}", f.parent.name,
                                    tuple(int(s) for s in f.name.split("-")), seed, f))  # fmt: skip
    return sorted(found, key=lambda m: (m.seed, m.order, m.folder.name))


def untrained(seed: int, folder: Path) -> SavedModel:
    """The entry of an untrained model of ``seed`` (the caller saves it at ``folder``)."""
    return SavedModel(f"{seed_prefix(seed)}/{UNTRAINED}", UNTRAINED, (), seed, folder)


def untrained_model(p: TrainParams, vocab_size: int, seed: int) -> CausalLM:
    """The untrained model of ``train.preset`` (``train.init``) for ``seed``, with the
    tokenizer's ``vocab_size``: the start of every run from scratch and the untrained baseline
    (the same weights for the same params and seed)."""
    from curll.model.config import preset
    from curll.model.llama import from_seed

    return from_seed(preset(p.preset, vocab_size=vocab_size), p.init, seed)


def stage_steps(p: TrainParams, stage_rows: Mapping[int, int]) -> dict[int, int]:
    """S_k for each of ``train.stages`` (``train.budget: steps``): ``train.steps_per_stage`` when
    > 0, else ceil(``epochs`` x the most packed train rows of a stage (``stage_rows``) / ``batch``),
    the same for every stage."""
    steps = p.steps_per_stage or -(-p.epochs * max(stage_rows.values(), default=0) // p.batch)
    return dict.fromkeys(p.stages, steps)


def fill(rows: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` row numbers out of ``rows``: passes over all rows (each a permutation drawn from
    ``rng``) one after another, the last cut short."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([rng.permutation(rows) for _ in range(-(-n // rows))])[:n]


def budget_order(
    starts: Sequence[int], steps: Sequence[int], stages: Sequence[int], *, batch: int, seed: int
) -> np.ndarray:
    """The rows a run trains on under ``train.budget: steps``, ``batch`` to a step. Part j holds
    rows ``starts[j]`` to ``starts[j + 1]`` (of stage ``stages[j]``) and gives exactly
    ``steps[j] x batch`` of them (:func:`fill`, drawn from (``seed``, stage): a stage gives the
    same rows in every order). Several parts are shuffled together with ``seed``: a mixture that
    draws each stage's rows in proportion to its steps."""
    drawn = [starts[j] + fill(starts[j + 1] - starts[j], steps[j] * batch, np.random.default_rng([seed, k]))
             for j, k in enumerate(stages)]  # fmt: skip
    order = np.concatenate(drawn).astype(np.int64)
    return order[np.random.default_rng(seed).permutation(len(order))] if len(drawn) > 1 else order


def spent(data: Parts, order: np.ndarray, steps: Sequence[int]) -> dict[str, Any]:
    """What a run trains on: optimizer ``steps`` (per part of ``data``: its share of the run's
    steps), rows (``context`` positions each) and loss tokens of ``order``, in all and per part
    (by the part's label: its stages)."""
    part = data.part_of(order)
    stages = {label: {"steps": int(steps[j]), "rows": int(np.count_nonzero(part == j)),
                      "loss_tokens": data.loss_tokens(order[part == j])}
              for j, label in enumerate(data.labels)}  # fmt: skip
    return _total(stages)


def cumulative(own: Mapping[str, Any], before: Mapping[str, Any] | None) -> dict[str, Any]:
    """:func:`spent` of a run plus ``before``, the cumulative compute of the run it starts from
    (a continual run's earlier stages; None from scratch)."""
    stages = {k: dict(v) for k, v in (before or {"stages": {}})["stages"].items()}
    for label, used in own["stages"].items():
        stages[label] = {k: stages.get(label, {}).get(k, 0) + v for k, v in used.items()}
    return _total(stages)


def _total(stages: dict[str, dict[str, int]]) -> dict[str, Any]:
    total = {key: sum(v[key] for v in stages.values()) for key in ("steps", "rows", "loss_tokens")}
    return {**total, "stages": stages}
