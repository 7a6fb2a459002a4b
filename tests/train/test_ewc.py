"""curll's EWC (:mod:`curll.train.ewc`) against Avalanche's ``EWCPlugin``, code we did not write.

``make install`` adds ``avalanche-lib`` without its declared dependencies (torchvision, wandb,
...: none of them is needed by the two modules read here). Avalanche's own
``training/plugins/ewc.py`` and ``training/utils.py`` run as they ship; only the names they
import from parts of Avalanche that pull those dependencies are stood in for (a plugin base
class, a forward helper, two classes used by other functions). The plugin sees our packed rows
through a DataLoader of row numbers and a module that returns the batch's mean loss, so both
compute on the same batches: the Fisher (after a stage) and the penalty (in a later stage) must
agree.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
import torch

from curll.train.batch import Batch, loss_sum
from curll.train.ewc import Memory, importances
from curll.train.orders import untrained_model
from curll.train.runs import _pack
from tests.train.test_trainer import P, on_disk, records

STRENGTH = 3.5


def _module(name: str, **attrs: Any) -> ModuleType:
    mod = ModuleType(name)
    mod.__dict__.update(attrs)
    mod.__path__ = []  # a package, so that submodules load under it
    return mod


def avalanche_plugin(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Avalanche's EWCPlugin class, loaded from the installed package's files."""
    found = importlib.util.find_spec("avalanche")
    if found is None or not found.submodule_search_locations:
        pytest.skip("avalanche-lib is not installed (make install adds it, without its dependencies)")
    root = Path(found.submodule_search_locations[0])

    class SupervisedPlugin:  # the plugin's base: no behaviour the plugin relies on
        def __init__(self) -> None:
            pass

    stand_ins = {
        "avalanche": _module("avalanche"),
        "avalanche.benchmarks": _module("avalanche.benchmarks", OnlineCLExperience=object),
        "avalanche.models": _module("avalanche.models"),
        "avalanche.models.batch_renorm": _module("avalanche.models.batch_renorm", BatchRenorm2D=object),
        "avalanche.models.utils": _module("avalanche.models.utils", avalanche_forward=lambda m, x, t: m(x)),
        "avalanche.training": _module("avalanche.training"),
        "avalanche.training.plugins": _module("avalanche.training.plugins"),
        "avalanche.training.plugins.strategy_plugin": _module(
            "avalanche.training.plugins.strategy_plugin", SupervisedPlugin=SupervisedPlugin
        ),
    }
    for name, mod in stand_ins.items():
        monkeypatch.setitem(sys.modules, name, mod)
    for name, path in (("avalanche.training.utils", "training/utils.py"),
                       ("avalanche.training.plugins.ewc", "training/plugins/ewc.py")):  # fmt: skip
        spec = importlib.util.spec_from_file_location(name, root / path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, mod)
        spec.loader.exec_module(mod)
    return sys.modules["avalanche.training.plugins.ewc"].EWCPlugin


class RowLoss(torch.nn.Module):
    """What the plugin calls the model: given a batch of row numbers, the batch's mean loss per
    trained token (the criterion then passes it through)."""

    def __init__(self, model: torch.nn.Module, data: Any) -> None:
        super().__init__()
        self.inner, self.data = model, data

    def forward(self, rows: torch.Tensor) -> torch.Tensor:
        picked = rows.tolist()
        total: torch.Tensor = loss_sum(self.inner, Batch.of(self.data.batch(picked)).to("cpu"))
        mean: torch.Tensor = total / self.data.loss_tokens(picked)
        return mean


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from curll.llm.bpe import train_bpe

    tok = train_bpe([f"Question {i}? The answer is {i * 7}. Cats and dogs play." for i in range(50)], 320)
    p = P.model_copy(update={"context": 48})
    recs = on_disk(records(6, (0,)), tmp_path_factory.mktemp("ewc"))
    data = _pack(recs, recs.meta, torch.arange(len(recs.meta)).numpy(), p, tok)
    model = untrained_model(p, len(tok), 7)
    return model, data


def test_fisher_and_penalty_equal_avalanche_ewc_plugin(setup, monkeypatch):
    model, data = setup
    assert data.rows >= 3 and all(data.loss_tokens([r]) for r in range(data.rows))
    plugin = avalanche_plugin(monkeypatch)(ewc_lambda=STRENGTH, mode="separate")
    wrapped = RowLoss(model, data)
    dataset = [(torch.tensor(r), 0, 0) for r in range(data.rows)]
    strategy = SimpleNamespace(
        clock=SimpleNamespace(train_exp_counter=0), model=wrapped, _criterion=lambda out, y: out,
        optimizer=torch.optim.SGD(wrapped.parameters(), lr=0.1), experience=SimpleNamespace(dataset=dataset),
        device="cpu", train_mb_size=2, loss=torch.zeros(()),
    )  # fmt: skip
    plugin.after_training_exp(strategy, num_workers=0)  # stage 0 ends: its importances and weights

    fisher = importances(model, data, batch=2, device="cpu")
    theirs = {k.removeprefix("inner."): v.data for k, v in plugin.importances[0].items()}
    assert set(theirs) == set(fisher)
    for k in fisher:
        assert torch.allclose(fisher[k], theirs[k], rtol=1e-5, atol=1e-12), k
    assert sum(float(f.sum()) for f in fisher.values()) > 0

    memory = Memory(STRENGTH).add(fisher, model)
    with torch.no_grad():  # stage 1 moves the weights
        for p in model.parameters():
            p.add_(0.01 * torch.randn_like(p))
    strategy.clock.train_exp_counter = 1
    plugin.before_backward(strategy)
    penalty = memory.penalty("cpu")
    assert penalty is not None
    ours, theirs_total = float(penalty(model).detach()), float(strategy.loss.detach())
    assert ours > 0 and ours == pytest.approx(theirs_total, rel=1e-5)


def test_no_memory_no_penalty(setup):
    model, _ = setup
    assert Memory(STRENGTH).penalty("cpu") is None  # the first stage has nothing to keep
    assert Memory(0.0).add({}, model).penalty("cpu") is None  # strength 0: off


def test_the_fisher_is_over_train_batches_whatever_the_micro_batch(setup):
    """The batch loss's gradient is summed over micro-batches before it is squared: the memory
    setting ``micro_batch`` leaves the Fisher as it is; the train batch does not."""
    model, data = setup
    assert data.rows >= 4
    whole = importances(model, data, batch=4, device="cpu")
    for micro in (1, 2, 3):
        parts = importances(model, data, batch=4, micro_batch=micro, device="cpu")
        for k in whole:
            assert torch.allclose(parts[k], whole[k], rtol=1e-4, atol=1e-10), (micro, k)
    smaller = importances(model, data, batch=2, device="cpu")
    assert sum(float(f.sum()) for f in smaller.values()) != pytest.approx(
        sum(float(f.sum()) for f in whole.values())
    )
