"""``lr_at`` against transformers' schedule helpers, an implementation we did not write.

After warmup our cosine is ``get_cosine_with_min_lr_schedule_with_warmup`` and our wsd is
``get_wsd_schedule`` with linear decay. During warmup ours is theirs one step later: their first
step runs at a learning rate of 0 (a step that changes nothing), ours at ``lr / warmup_steps``.
"""

from __future__ import annotations

import pytest
import torch
from transformers import get_cosine_with_min_lr_schedule_with_warmup, get_wsd_schedule

from curll.train.trainer import lr_at
from tests.train.test_trainer import P

TOTAL = 40


def theirs(make) -> list[float]:
    """The learning rate of each of TOTAL optimizer steps under a transformers scheduler."""
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=P.optim.lr)
    sched = make(opt)
    out = []
    for _ in range(TOTAL + 1):
        out.append(sched.get_last_lr()[0])
        opt.step()
        sched.step()
    return out


@pytest.mark.parametrize("warmup, floor", [(0.0, 0.1), (0.1, 0.1), (0.25, 0.0), (0.1, 0.5)])
def test_cosine_is_transformers_cosine_with_a_floor(warmup, floor):
    o = P.optim.model_copy(update={"schedule": "cosine", "warmup": warmup, "min_lr_ratio": floor})
    warm = int(warmup * TOTAL)
    ref = theirs(lambda opt: get_cosine_with_min_lr_schedule_with_warmup(opt, warm, TOTAL, min_lr_rate=floor))
    ours = [lr_at(s, TOTAL, o) for s in range(TOTAL)]
    assert ours[warm:] == pytest.approx(ref[warm:TOTAL], rel=1e-12)
    assert ours[:warm] == pytest.approx(ref[1 : warm + 1], rel=1e-12)  # one step ahead in warmup


@pytest.mark.parametrize(
    "warmup, decay, floor", [(0.0, 0.2, 0.1), (0.1, 0.5, 0.0), (0.05, 0.5, 0.3), (0.0, 1.0, 0.0)]
)
def test_wsd_is_transformers_wsd_with_linear_decay(warmup, decay, floor):
    o = P.optim.model_copy(
        update={"schedule": "wsd", "warmup": warmup, "decay": decay, "min_lr_ratio": floor}
    )
    warm, decay_steps = int(warmup * TOTAL), int(decay * TOTAL)
    stable = TOTAL - decay_steps - warm
    ref = theirs(lambda opt: get_wsd_schedule(opt, warm, decay_steps, num_stable_steps=stable,
                                              decay_type="linear", min_lr_ratio=floor))  # fmt: skip
    ours = [lr_at(s, TOTAL, o) for s in range(TOTAL)]
    assert ours[warm:] == pytest.approx(ref[warm:TOTAL], rel=1e-12)
