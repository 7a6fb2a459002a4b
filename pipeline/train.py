"""DVC stage ``train``: the models of ``train.order`` for ``train.stages``.

Reads the train split of ``split.out.records`` and the tokenizer folder; writes one Hugging
Face model folder per run under ``out.models`` (``<order>/<stages>``, e.g. ``continual/0-1``),
``out.metrics`` and a loss curve per run in ``out.plots`` (``<run>.csv``).

``out.metrics``: ``orders``, ``processes``, ``budget`` (``train.budget``: ``data`` or ``steps``),
``steps_per_stage`` (S_k by stage under ``steps``, else null) and ``runs``: per run, steps, tokens,
tokens/s, final loss, the packed data's stats (``rows``, ``loss_tokens``... of one pass), the loss
on the validation records of the run's stages next to an untrained model's, and ``compute``:
what the run trained on, ``{steps, rows, loss_tokens, stages: {<part>: {steps, rows,
loss_tokens}}, cumulative: {...}}``, rows counted with repeats (``context`` positions each),
parts keyed by their stages (``"2"``; under ``data`` a joint run's rows mix its stages:
``"0-1-2"``), and ``cumulative`` adding the runs a continual run continues. Under ``steps``,
joint ``0-..-k``'s ``compute`` equals continual ``0-..-k``'s ``cumulative``.

Checkpoints go to ``out.checkpoints`` (outside DVC's outputs;
:func:`curll.train.runs.checkpoint_key` keys them by params, data and tokenizer), so a killed
run resumes where it stopped.

DDP: with ``train.processes`` > 1 the stage runs itself again under torchrun with that many
processes; started by ``torchrun`` / ``accelerate launch`` directly it joins their group.
Every rank trains; rank 0 alone writes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from curll.artifacts import atomic_path, write_json
from curll.config import Params
from curll.train import distributed
from curll.train.records import RecordFile
from curll.train.runs import run_order, settings
from curll.train.tokenizer import load_tokenizer
from curll.yamlio import dump_yaml
from pipeline.tools.console import say


def run(params: Params) -> None:
    p = params.train
    if p.processes > 1 and not distributed.launched():
        with tempfile.TemporaryDirectory() as tmp:  # the params as read, for the child processes
            path = Path(tmp) / "params.yaml"
            dump_yaml(params.model_dump(mode="json"), path)
            say(f"train: starting {p.processes} DDP processes (torchrun)")
            distributed.relaunch(p.processes, ["train", "run", "--params", str(path)])
        return
    with distributed.setup(settings(p).device) as world:
        _run(params, world)


def steps_per_stage(budget: str, metrics: dict[str, Any]) -> dict[str, int] | None:
    """S_k by stage, as the runs' ``compute`` spent it (``budget: steps``); None under ``data``."""
    if budget != "steps":
        return None
    found = {k: v["steps"] for run in metrics.values() for k, v in run["compute"]["stages"].items()}
    return dict(sorted(found.items(), key=lambda kv: int(kv[0])))


def _run(params: Params, world: distributed.World) -> None:
    p = params.train
    train = RecordFile(params.split.out.records, "train")  # messages are read when packed
    tok = load_tokenizer(params.tokenizer.out.dir)
    validation = RecordFile(params.split.out.records, "validation")
    metrics, log = run_order(train, tok, p, validation)
    if not world.main:
        return
    steps = pd.DataFrame(log, columns=["run", "step", "loss", "lr", "tokens_per_s"])
    for name, group in steps.groupby("run", sort=False):
        with atomic_path(Path(p.out.plots) / f"{str(name).replace('/', '_')}.csv") as tmp:
            group.drop(columns="run").to_csv(tmp, index=False)
    per_stage = steps_per_stage(p.budget, metrics)
    write_json(p.out.metrics, {"orders": list(p.orders), "processes": world.size, "budget": p.budget,
                               "steps_per_stage": per_stage, "runs": metrics})  # fmt: skip
    say(_summary(metrics, p.out.metrics))


def _summary(metrics: dict[str, Any], path: str) -> str:
    """One line: models per order and their mean held-out loss (every run is in ``path``)."""
    held: dict[str, list[float]] = {}
    for name, run in metrics.items():  # name: seed-<seed>/<order>/<stages>
        if run.get("val_loss") is not None:
            held.setdefault(name.split("/")[1], []).append(float(run["val_loss"]))
    orders = ", ".join(f"{o} {sum(v) / len(v):.3f} ({len(v)} models)" for o, v in held.items())
    return f"train: {len(metrics)} models -> {path}; mean held-out loss (nats/token): {orders or 'none'}"
