"""DVC stage ``evaluate_loss``: every model's loss on every stage's held-out answers (no LLM).

Reads the ``evaluate.loss.splits`` splits of ``split.out.records`` (the records of
``evaluate.types``), the tokenizer, every model folder
``train.out.models/seed-<seed>/<order>/<stages>`` (every seed) and, with ``evaluate.untrained``,
an untrained model of ``train.preset`` per seed (as ``evaluate_infer`` makes it). Writes
``evaluate.out.losses`` (LossSchema): per record and model, the summed NLL of the answer tokens
given the prompt, as in training (:func:`curll.evaluate.nll.record_nll`), with
``train.context``. Deterministic: no sampling.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from curll.artifacts import write_table
from curll.config import Params
from curll.errors import CurllError
from curll.evaluate.nll import record_nll
from curll.schemas.evaluate import LossSchema
from curll.train.orders import SavedModel, saved_models, untrained, untrained_model
from curll.train.records import RecordFile
from pipeline.report import say


def _held_out(params: Params) -> tuple[pd.DataFrame, list[str]]:
    """The scored records (record_id, split, stage, type), sorted, and their messages."""
    metas, texts = [], []
    for split in params.evaluate.loss.splits:
        rf = RecordFile(params.split.out.records, split)
        meta = rf.meta[rf.meta["type"].isin(params.evaluate.types)].sort_values("position")
        metas.append(meta)
        texts += list(rf.messages(meta["position"].to_numpy()))
    held = pd.concat(metas, ignore_index=True)[["record_id", "split", "stage", "type"]]
    return held, texts


def _models(params: Params, vocab: int) -> list[tuple[SavedModel, Callable[[], Any]]]:
    """Every trained model of every seed, and the untrained one of each seed, with a loader."""
    from curll.model.hf import load_hf

    t = params.train
    runs = saved_models(t.out.models, t.seeds)
    if not runs:
        raise CurllError("no trained models: run the train stage", file=t.out.models)
    out: list[tuple[SavedModel, Callable[[], Any]]] = [(m, partial(load_hf, m.folder)) for m in runs]
    if params.evaluate.untrained:
        out += [(untrained(s, Path()), partial(untrained_model, t, vocab, s)) for s in t.seeds]
    return out


def run(params: Params) -> None:
    import torch
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(params.tokenizer.out.dir)
    held, texts = _held_out(params)
    if held.empty:
        raise CurllError(
            "no held-out records of the evaluated types", file=params.split.out.records, field="split"
        )
    device = "cuda" if params.evaluate.infer.device != "cpu" and torch.cuda.is_available() else "cpu"
    types = held["type"].tolist()
    parts = []
    for model, load in tqdm(_models(params, len(tok)), desc="evaluate_loss: models", unit="model"):
        nll, n = record_nll(load(), texts, types, tok, context=params.train.context,
                            micro_batch=params.evaluate.loss.micro_batch, device=device)  # fmt: skip
        parts.append(held.assign(run=model.name, order=model.order, seed=model.seed,
                                 trained_to=model.trained_to, nll=nll, tokens=n))  # fmt: skip
    losses = pd.concat(parts, ignore_index=True)
    write_table(losses, params.evaluate.out.losses, LossSchema)
    unfit = int(np.isnan(parts[0]["nll"].to_numpy()).sum())
    say(f"evaluate_loss: {len(held)} records ({', '.join(params.evaluate.loss.splits)}) x {len(parts)} models"
        f" on {device}; {unfit} too long for train.context={params.train.context}")  # fmt: skip
