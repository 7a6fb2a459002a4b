"""The three training orders as a plan of runs.

- independent: M_k from scratch on stage k's train data, for every k in ``stages``;
- joint: M_0..k from scratch on the shuffled union of stages up to k, for every k;
- continual: M_0-..-k starts from M_0-..-(k-1)'s final weights and trains on stage k (plus an
  optional replay sample of earlier stages); the first run starts from scratch.

A run's ``name`` is ``<order>/<stages joined by "-">`` (``independent/2``, ``joint/0-1-2``,
``continual/0-1-2``): the folder its model is saved under, and how evaluation tells models
apart. ``trained_to`` is the last stage the model has seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Order = Literal["independent", "joint", "continual"]


@dataclass(frozen=True)
class Run:
    name: str
    order: Order
    data_stages: tuple[int, ...]  # stages whose train rows this run trains on
    replay_stages: tuple[int, ...]  # earlier stages sampled for replay (continual only)
    init_from: str | None  # the run whose final weights this one starts from

    @property
    def trained_to(self) -> int:
        return self.data_stages[-1]


def plan(order: Order, stages: tuple[int, ...], *, replay: float = 0.0) -> list[Run]:
    runs: list[Run] = []
    for i, k in enumerate(stages):
        seen = stages[: i + 1]
        label = "-".join(map(str, seen))
        if order == "independent":
            runs.append(Run(f"independent/{k}", order, (k,), (), None))
        elif order == "joint":
            runs.append(Run(f"joint/{label}", order, seen, (), None))
        else:
            prev = runs[-1].name if runs else None
            replays = stages[:i] if replay > 0 else ()
            runs.append(Run(f"continual/{label}", order, (k,), replays, prev))
    return runs
