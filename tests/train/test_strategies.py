"""The continual-learning strategies (orders of :mod:`curll.orders` that add a technique to
continual), trained on real tiny models over three stages of unequal size: each does what its
spec says and nothing else, and under ``budget: steps`` all take the same steps per stage."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from transformers import get_cosine_with_min_lr_schedule_with_warmup

from curll import orders
from curll.train.orders import plan
from curll.train.strategies import carries_optimizer, ewc_strength, one_schedule, optim_of, replay_share
from tests.train.test_budget import frame, params
from tests.train.test_trainer import on_disk

STRATEGIES = ("continual-replay", "continual-rewarm", "continual-ewc", "continual-replay-rewarm")


@pytest.fixture(scope="module")
def tok():
    from curll.llm.bpe import train_bpe

    return train_bpe([f"Question {i}? The answer is {i * 7}. Cats and dogs play." for i in range(50)], 320)


def trained(
    tok, tmp_path, monkeypatch, **kw: Any
) -> tuple[dict[str, Any], dict[str, list[float]], dict[str, Any]]:
    """(metrics, lr of every step by run, the model state after each run) of ``run_order``."""
    import curll.train.runs as runs

    states: dict[str, Any] = {}
    real = runs.train  # type: ignore[attr-defined]

    def spy(model, data, s, **kwargs):
        out = real(model, data, s, **kwargs)
        states[kwargs["desc"].removeprefix("train seed-42/")] = {
            k: v.clone() for k, v in model.state_dict().items()
        }
        return out

    monkeypatch.setattr(runs, "train", spy)
    p = params(tmp_path, order=("continual", *STRATEGIES), **kw)
    metrics, log = runs.run_order(on_disk(frame(), tmp_path), tok, p)
    lrs: dict[str, list[float]] = {}
    for row in log:
        lrs.setdefault(row["run"].removeprefix("seed-42/"), []).append(row["lr"])
    return {k.removeprefix("seed-42/"): v for k, v in metrics.items()}, lrs, states


def test_each_strategy_reads_its_own_settings(tmp_path):
    p = params(tmp_path)
    assert [replay_share(o, p) for o in ("continual", *STRATEGIES)] == [0.0, 0.25, 0.0, 0.0, 0.25]
    assert [ewc_strength(o, p) for o in ("continual", *STRATEGIES)] == [0.0, 0.0, 0.0, 10000.0, 0.0]
    assert optim_of("continual-rewarm", p).schedule == "cosine" and optim_of("continual-ewc", p) == p.optim
    assert carries_optimizer("continual-rewarm", p) and not carries_optimizer("continual", p)  # carry | reset
    assert not one_schedule("continual-rewarm", p.model_copy(update={"optim": p.optim.model_copy(
        update={"rewarm": False})}))  # rewarm restarts its schedule whatever optim.rewarm says  # fmt: skip
    assert all(orders.spec(s).sequential and orders.spec(s).strategy for s in STRATEGIES)
    runs = plan("continual-replay", (0, 1, 2), seed=1, replay=0.25)
    assert [r.replay_stages for r in runs] == [(), (0,), (0, 1)]


def test_strategies_differ_from_continual_only_in_their_technique(tok, tmp_path, monkeypatch):
    n = 10
    metrics, lrs, states = trained(tok, tmp_path, monkeypatch, budget="steps", steps_per_stage=n)
    for s in STRATEGIES:  # matched compute: the same steps at every stage
        assert [metrics[f"{s}/{lab}"]["steps"] for lab in ("0", "0-1", "0-1-2")] == [n, n, n], s
    # replay: a later stage's rows mix in earlier stages' records (none at the first stage)
    assert metrics["continual-replay/0"]["records"] == metrics["continual/0"]["records"]
    for lab in ("0-1", "0-1-2"):
        assert metrics[f"continual-replay/{lab}"]["records"] > metrics[f"continual/{lab}"]["records"]
    # rewarm: warm-up then cosine within each stage, restarted at every stage; as transformers'
    # schedule, ours one step ahead in the warm-up (theirs spends its first step at lr 0)
    o = optim_of("continual-rewarm", params(tmp_path))
    warm = int(o.warmup * n)
    ref = get_cosine_with_min_lr_schedule_with_warmup(
        torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=o.lr), warm, n, min_lr_rate=o.min_lr_ratio
    )
    theirs = []
    for _ in range(n + 1):
        theirs.append(ref.get_last_lr()[0])
        ref.optimizer.step()
        ref.step()
    assert warm == 1
    for lab in ("0", "0-1", "0-1-2"):
        ours = lrs[f"continual-rewarm/{lab}"]
        assert ours[warm:] == pytest.approx(theirs[warm:n], rel=1e-12)
        assert ours[:warm] == pytest.approx(theirs[1 : warm + 1], rel=1e-12)
        assert lrs[f"continual/{lab}"] == [params(tmp_path).optim.lr] * n  # constant: the default
    # ewc: the first stage has nothing to keep (the same model as continual's), later ones differ
    same = all(
        torch.equal(states["continual/0"][k], states["continual-ewc/0"][k]) for k in states["continual/0"]
    )
    differs = any(not torch.equal(states["continual/0-1"][k], states["continual-ewc/0-1"][k])
                  for k in states["continual/0-1"])  # fmt: skip
    assert same and differs


@pytest.mark.parametrize(("share", "taken"), [(0.1, {1: 1, 2: 1}), (0.5, {1: 6, 2: 2})])
def test_replay_takes_its_share_rounded_and_at_least_one_record(tok, tmp_path, share, taken):
    """Own records a stage 6, 14 and 3 (``frame``): 0.1 x 14 rounds to 1 and 0.1 x 3 to 0, but a
    positive share replays at least one (before, stage 2 replayed none: plain continual); 0.5 x 14
    is 7, of the 6 records stage 0 has; 0.5 x 3 = 1.5 takes 2."""
    from curll.train.runs import pack_run

    base = params(tmp_path, order=("continual-replay",))
    p = base.model_copy(update={"strategies": base.strategies.model_copy(update={"replay": share})})
    records = on_disk(frame(), tmp_path)
    own = records.meta["stage"].value_counts().to_dict()
    for run in plan("continual-replay", (0, 1, 2), seed=42, replay=share)[1:]:
        packed = pack_run(records, run, p, tok)
        assert packed.records - own[run.trained_to] == taken[run.trained_to], run.name
