"""DVC stage ``train``: the models of ``train.order`` for ``train.stages``.

Reads the train split of ``split.out.records`` and the tokenizer folder; writes one Hugging
Face model folder per run under ``out.models`` (``<order>/<stages>``, e.g. ``continual/0-1``),
``out.metrics`` (per run: steps, tokens, tokens/s, final loss, packing efficiency) and a loss
curve per run in ``out.plots``. Checkpoints go to ``out.checkpoints`` (outside DVC's outputs,
keyed by a hash of the params and data), so a killed run resumes where it stopped.
Multi-GPU (torchrun / accelerate) is not wired into this stage yet (see issue 5).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from curll.artifacts import atomic_path, read_table, write_json
from curll.config import Params
from curll.schemas import RecordSchema
from curll.train.runs import run_order
from pipeline.report import say


def run(params: Params) -> None:
    from transformers import AutoTokenizer

    p = params.train
    records = read_table(params.split.out.records, RecordSchema)
    train = records[records["split"] == "train"].sort_values("record_id").reset_index(drop=True)
    tok = AutoTokenizer.from_pretrained(params.tokenizer.out.dir)
    digest = hashlib.sha256(
        json.dumps(p.model_dump(mode="json"), sort_keys=True).encode()
        + pd.util.hash_pandas_object(train[["record_id", "messages"]], index=False).to_numpy().tobytes()
        + Path(params.tokenizer.out.dir, "tokenizer.json").read_bytes()
    ).hexdigest()[:16]
    p = p.model_copy(
        update={"out": p.out.model_copy(update={"checkpoints": f"{p.out.checkpoints}/{digest}"})}
    )
    metrics, log = run_order(train, tok, p)
    steps = pd.DataFrame(log, columns=["run", "step", "loss", "lr", "tokens_per_s"])
    for name, group in steps.groupby("run", sort=False):
        with atomic_path(Path(p.out.plots) / f"{str(name).replace('/', '_')}.csv") as tmp:
            group.drop(columns="run").to_csv(tmp, index=False)
    write_json(p.out.metrics, {"order": p.order, "runs": metrics})
    say("train: " + ", ".join(f"{k} loss {v['final_loss']}" for k, v in metrics.items()))
