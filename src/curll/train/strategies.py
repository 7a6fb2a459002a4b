"""What a run of an order does beyond plain training, from its spec (:mod:`curll.orders`) and the
train params: the one place an order's ``carries`` and ``adds`` meet ``train.continual`` and
``train.strategies``.

- :func:`replay_share`: the share of a stage's rows added from earlier stages' train rows:
  ``strategies.replay`` for an order that adds replay, ``continual.replay`` for one that
  carries it (continual: 0 by default), else none;
- :func:`carries_optimizer`: whether AdamW's state passes to the next stage's run
  (``strategies.optimizer`` for an order that adds rewarm, ``continual.optimizer`` for one that
  carries it);
- :func:`optim_of`: the run's optimizer settings: for an order that adds rewarm, ``optim.lr``
  after a linear warm-up over ``strategies.warmup`` of the stage's steps, then a cosine to
  ``strategies.min_lr_ratio`` of it, restarted at every stage; else ``optim``;
- :func:`one_schedule`: whether one schedule spans the whole sequence (an order that carries
  its schedule, ``optim.rewarm: false``, and no rewarm of its own);
- :func:`ewc_strength`: EWC's lambda for an order that adds EWC (``strategies.ewc``), else 0.
"""

from __future__ import annotations

from curll.config.train import OptimParams, TrainParams
from curll.orders import spec


def replay_share(order: str, p: TrainParams) -> float:
    o = spec(order)
    if "replay" in o.adds:
        return float(p.strategies.replay)
    return float(p.continual.replay) if "replay" in o.carries else 0.0


def carries_optimizer(order: str, p: TrainParams) -> bool:
    o = spec(order)
    if "optimizer" not in o.carries:
        return False
    mode = p.strategies.optimizer if "rewarm" in o.adds else p.continual.optimizer
    return mode == "carry"


def optim_of(order: str, p: TrainParams) -> OptimParams:
    if "rewarm" not in spec(order).adds:
        return p.optim
    s = p.strategies
    return p.optim.model_copy(
        update={"schedule": "cosine", "warmup": s.warmup, "min_lr_ratio": s.min_lr_ratio}
    )


def one_schedule(order: str, p: TrainParams) -> bool:
    o = spec(order)
    return "schedule" in o.carries and "rewarm" not in o.adds and not p.optim.rewarm


def ewc_strength(order: str, p: TrainParams) -> float:
    return float(p.strategies.ewc) if "ewc" in spec(order).adds else 0.0
