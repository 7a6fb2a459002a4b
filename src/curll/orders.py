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
  (``train.optim.rewarm: false``: one learning-rate schedule over the whole sequence);
- ``adds``: the continual-learning strategy on top of a sequential order, each technique set
  by ``train.strategies``: ``replay`` (a share of earlier stages' train rows mixed into each
  stage's), ``rewarm`` (a linear warm-up, then a cosine decay, of the learning rate within
  every stage, AdamW's state carried or reset) and ``ewc`` (elastic weight consolidation: a
  penalty pulling the weights towards each finished stage's, weighted by a diagonal Fisher
  estimated on that stage's train rows). Replay + rewarm is the recipe of Ibrahim et al. (2024).

Adding an order is adding one spec (:func:`register` for one made at run time, as a test
does). This module imports nothing of curll but :mod:`curll.registry`, so every layer may read it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal

from curll.registry import Registry

Start = Literal["scratch", "previous"]
Data = Literal["stage", "cumulative"]
Carried = Literal["optimizer", "replay", "schedule"]
Technique = Literal["replay", "rewarm", "ewc"]


@dataclass(frozen=True)
class OrderSpec:
    name: str  # a folder name: lower-case letters, digits and hyphens
    start: Start
    data: Data
    about: str  # one line for people: docs, the params reference, the report
    carries: tuple[Carried, ...] = ()
    adds: tuple[Technique, ...] = ()  # a continual-learning strategy (train.strategies)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9-]*", self.name):
            raise ValueError(
                f"order {self.name!r}: a name is lower-case letters, digits and hyphens (a folder)"
            )
        if (self.carries or self.adds) and self.start != "previous":
            raise ValueError(f"order {self.name!r}: carries and adds pass state from a stage's run to the "
                             "next: they need start 'previous'")  # fmt: skip

    @property
    def strategy(self) -> bool:
        """A continual-learning strategy on top of a plain order (compared with the plain ones)."""
        return bool(self.adds)

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


#: the first part of a seed's run names (and its folder of models): seed-42
SEED_PREFIX = "seed-"


def seed_prefix(seed: int) -> str:
    return f"{SEED_PREFIX}{seed}"


def run_name(seed: int, order: str, seen: Sequence[int]) -> str:
    """A model's run name, also its folder under the models folder: ``seed-42/continual/0-1-2``
    (``seen``: :meth:`OrderSpec.seen`)."""
    return f"{seed_prefix(seed)}/{order}/{'-'.join(map(str, seen))}"


#: what a continual run passes on (as the paper's continual order)
_CONTINUAL: tuple[Carried, ...] = ("optimizer", "replay", "schedule")

#: every order, in the order reports list them: the paper's three, then the strategies
ORDERS: Registry[OrderSpec] = Registry("order", (
    OrderSpec("independent", "scratch", "stage", "M_k from scratch on stage k alone"),
    OrderSpec("joint", "scratch", "cumulative", "M_0..k from scratch on the shuffled union of stages 0..k"),
    OrderSpec("continual", "previous", "stage", "M_0-..-k continues from M_0-..-(k-1) on stage k",
              carries=_CONTINUAL),
    OrderSpec("continual-replay", "previous", "stage",
              "continual, each stage's rows mixed with a share of earlier stages' rows",
              carries=_CONTINUAL, adds=("replay",)),
    OrderSpec("continual-rewarm", "previous", "stage",
              "continual, the learning rate warmed up and decayed again within every stage",
              carries=_CONTINUAL, adds=("rewarm",)),
    OrderSpec("continual-ewc", "previous", "stage",
              "continual, with an EWC penalty towards each finished stage's weights",
              carries=_CONTINUAL, adds=("ewc",)),
    OrderSpec("continual-replay-rewarm", "previous", "stage",
              "continual with replay and a re-warmed learning rate (Ibrahim et al. 2024)",
              carries=_CONTINUAL, adds=("replay", "rewarm")),
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


def compared(present: Iterable[str]) -> list[tuple[str, str]]:
    """The pairs of ``present`` orders whose paired differences are reported and tested, in
    :data:`ORDERS` order: every two plain orders (the paper's three), and each strategy against
    each plain order that is sequential or an upper bound (continual, joint)."""
    found = ranked(present)
    out = []
    for i, a in enumerate(found):
        for b in found[i + 1 :]:
            x, y = ORDERS[a], ORDERS[b]
            plain = y if x.strategy else x
            if (not x.strategy and not y.strategy) or (
                x.strategy != y.strategy and (plain.sequential or plain.bound)
            ):
                out.append((a, b))
    return out


def pair_of(text: str) -> tuple[str, str]:
    """(a, b) of a pair of orders named ``<a>-<b>`` (``joint-continual-replay``): names may hold
    hyphens, so the split is at the hyphen with a registered order on both sides, else at the first."""
    for i, ch in enumerate(text):
        if ch == "-" and text[:i] in ORDERS and text[i + 1 :] in ORDERS:
            return text[:i], text[i + 1 :]
    a, _, b = text.partition("-")
    return a, b


def register(order: OrderSpec) -> AbstractContextManager[OrderSpec]:
    """``order`` is known inside the block (after the others), then forgotten."""
    return ORDERS.register(order)
