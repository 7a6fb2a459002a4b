"""DVC stage ``train``: the models of ``train.order`` for ``train.stages``.

Reads the train split of ``split.out.records`` and the tokenizer folder; writes one Hugging
Face model folder per run under ``out.models`` (``<order>/<stages>``, e.g. ``continual/0-1``),
``out.metrics`` (per run: steps, tokens, tokens/s, final loss, packing efficiency, and the
loss on the validation records of the run's stages next to an untrained model's) and a loss
curve per run in ``out.plots`` (``<run>.csv``). Checkpoints go to ``out.checkpoints`` (outside
DVC's outputs; :func:`curll.train.runs.checkpoint_key` keys them by params, data and tokenizer),
so a killed run resumes where it stopped.

DDP: with ``train.processes`` > 1 the stage runs itself again under torchrun with that many
processes; started by ``torchrun`` / ``accelerate launch`` directly it joins their group.
Every rank trains; rank 0 alone writes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import yaml

from curll.artifacts import atomic_path, write_json
from curll.config import Params
from curll.train import distributed
from curll.train.records import RecordFile
from curll.train.runs import run_order, settings
from pipeline.report import say


def run(params: Params) -> None:
    p = params.train
    if p.processes > 1 and not distributed.launched():
        with tempfile.TemporaryDirectory() as tmp:  # the params as read, for the child processes
            path = Path(tmp) / "params.yaml"
            path.write_text(yaml.safe_dump(params.model_dump(mode="json"), sort_keys=False))
            say(f"train: starting {p.processes} DDP processes (torchrun)")
            distributed.relaunch(p.processes, ["train", "run", "--params", str(path)])
        return
    with distributed.setup(settings(p).device) as world:
        _run(params, world)


def _run(params: Params, world: distributed.World) -> None:
    from transformers import AutoTokenizer

    p = params.train
    train = RecordFile(params.split.out.records, "train")  # messages are read when packed
    tok = AutoTokenizer.from_pretrained(params.tokenizer.out.dir)
    validation = RecordFile(params.split.out.records, "validation")
    metrics, log = run_order(train, tok, p, validation)
    if not world.main:
        return
    steps = pd.DataFrame(log, columns=["run", "step", "loss", "lr", "tokens_per_s"])
    for name, group in steps.groupby("run", sort=False):
        with atomic_path(Path(p.out.plots) / f"{str(name).replace('/', '_')}.csv") as tmp:
            group.drop(columns="run").to_csv(tmp, index=False)
    write_json(p.out.metrics, {"orders": list(p.orders), "processes": world.size, "runs": metrics})
    say("train: " + ", ".join(
        f"{k} loss {v['final_loss']} (held out {v.get('val_loss')}, untrained {v.get('val_loss_untrained')})"
        for k, v in metrics.items()
    ))  # fmt: skip
