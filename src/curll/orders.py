"""The training orders, each declared once as an :class:`OrderSpec` in :data:`ORDERS`.

An order says how a model of each stage k is made; every other place reads these specs:
config checks ``train.order`` against :data:`ORDERS`, the train stage plans its runs from
them (:func:`curll.train.orders.plan`), the schemas accept their names, and evaluation takes
from them which orders have forgetting and backward transfer (:attr:`OrderSpec.sequential`),
which one is the forward-transfer reference (:attr:`OrderSpec.reference`) and which one is
the upper bound that sequential orders are compared with (:attr:`OrderSpec.bound`).

- ``start``: ``scratch`` (the untrained model of the run's seed) or ``previous`` (the final
  weights of the same order's model of the previous stage, same seed; the first stage starts
  from scratch);
- ``data``: ``stage`` (stage k's train rows) or ``cumulative`` (the shuffled union of the
  stages up to k, a mixture);
- ``carries``: what passes from a stage's run to the next besides the weights, each set by a
  train param: ``optimizer`` (``train.continual.optimizer``: AdamW's state), ``replay``
  (``train.continual.replay``: a share of earlier stages' rows), ``schedule``
  (``train.optim.rewarm: false``: one learning-rate schedule over the whole sequence).

Adding an order is adding one spec (:func:`register` for one made at run time, as a test
does). This module imports nothing of curll, so every layer may read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal

from curll.registry import Registry

Start = Literal["scratch", "previous"]
Data = Literal["stage", "cumulative"]
Carried = Literal["optimizer", "replay", "schedule"]


@dataclass(frozen=True)
class OrderSpec:
    name: str  # a folder name: lower-case letters, digits and hyphens
    start: Start
    data: Data
    about: str  # one line for people: docs, the params reference, the report
    carries: tuple[Carried, ...] = ()

    @property
    def sequential(self) -> bool:
        """Each model is trained on top of the previous one: forgetting and backward transfer
        describe such a sequence and are defined for it alone."""
        return self.start == "previous"

    @property
    def reference(self) -> bool:
        """Models from scratch on their own stage alone: forward transfer is measured against
        their diagonal (FWT)."""
        return self.start == "scratch" and self.data == "stage"

    @property
    def bound(self) -> bool:
        """Models from scratch on every stage so far at once: the upper bound a sequential
        order is compared with (its difference map)."""
        return self.start == "scratch" and self.data == "cumulative"

    def seen(self, stages: Sequence[int], at: int) -> tuple[int, ...]:
        """The stages whose train rows the model of ``stages[at]`` has learned from, in order:
        its own stage alone for the reference order, every stage up to it otherwise (a
        sequential model saw the earlier ones in earlier runs). It names the run."""
        return (stages[at],) if self.reference else tuple(stages[: at + 1])


#: every order, in the order reports list them
ORDERS: Registry[OrderSpec] = Registry("order", (
    OrderSpec("independent", "scratch", "stage", "M_k from scratch on stage k alone"),
    OrderSpec("joint", "scratch", "cumulative", "M_0..k from scratch on the shuffled union of stages 0..k"),
    OrderSpec("continual", "previous", "stage", "M_0-..-k continues from M_0-..-(k-1) on stage k",
              carries=("optimizer", "replay", "schedule")),
))  # fmt: skip
names, spec = ORDERS.names, ORDERS.spec


def ranked(present: Iterable[str]) -> list[str]:
    """The orders of ``present`` that are registered, in :data:`ORDERS` order."""
    found = set(present)
    return [o for o in ORDERS if o in found]


def reference() -> str | None:
    """The first registered order that is a forward-transfer reference (independent), or None."""
    return next((o.name for o in ORDERS.values() if o.reference), None)


def sequential(present: Iterable[str]) -> list[str]:
    """The sequential orders of ``present`` (forgetting is theirs), in :data:`ORDERS` order."""
    return [o for o in ranked(present) if ORDERS[o].sequential]


def bounds(present: Iterable[str]) -> list[str]:
    """The upper-bound orders of ``present`` (joint), in :data:`ORDERS` order."""
    return [o for o in ranked(present) if ORDERS[o].bound]


def register(order: OrderSpec) -> AbstractContextManager[OrderSpec]:
    """``order`` is known inside the block (after the others), then forgotten."""
    return ORDERS.register(order)
