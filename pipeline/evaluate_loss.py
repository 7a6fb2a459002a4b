"""DVC stage ``evaluate_loss``: every model's loss on every stage's held-out answers (no LLM).

Reads the ``evaluate.loss.splits`` splits of ``split.out.records`` (the records of
``evaluate.types``), the tokenizer, every model folder
``train.out.models/seed-<seed>/<order>/<stages>`` (every seed) and, with ``evaluate.untrained``,
an untrained model of ``train.preset`` per seed (as ``evaluate_infer`` makes it). Writes
``evaluate.out.losses`` (LossSchema): per record and model, the summed NLL of the answer tokens
given the prompt, as in training (:func:`curll.evaluate.nll.record_nll`), with
``train.context``, and beside it ``unigram_nll``: the same targets' NLL under the add-one
unigram of the answer tokens that model was trained on (:mod:`curll.evaluate.unigram`; the
untrained model's: uniform over the vocabulary). Deterministic: no sampling.
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
from curll.evaluate import unigram
from curll.evaluate.nll import record_nll
from curll.schemas.evaluate import LossSchema
from curll.train.orders import SavedModel, saved_models, untrained, untrained_model
from curll.train.records import RecordFile
from curll.train.tokenizer import load_tokenizer
from pipeline.tools.console import say


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


def _unigrams(
    params: Params, tok: Any, held_texts: list[str], types: list[str]
) -> Callable[[SavedModel], np.ndarray]:
    """model -> (R,) summed unigram NLL of each held-out record's targets (NaN where none):
    the add-one unigram of the train answers of the stages that model saw, counted once a stage."""
    from curll.chat import CUT
    from curll.train.data import encode, fit

    cut = tok(CUT, add_special_tokens=False)["input_ids"]
    train = RecordFile(params.split.out.records, "train")
    vocab = len(tok)
    held = encode(held_texts, tok, loss="assistant", types=types)
    per_stage: dict[int, np.ndarray] = {}
    for stage in sorted(int(s) for s in train.meta["stage"].unique()):
        positions = np.sort(train.meta.loc[train.meta["stage"] == stage, "position"].to_numpy())
        types = train.meta.set_index("position").loc[positions, "type"].tolist()
        docs = encode(list(train.messages(positions)), tok, loss="assistant", types=types)
        kept = [d for d in docs if fit(d, params.train.context, cut) is not None]  # as the trainer keeps them
        per_stage[stage] = unigram.counts(kept, vocab)

    def score(model: SavedModel) -> np.ndarray:
        seen = unigram.trained_stages(model.order, model.trained_to, params.train.stages)
        c = sum((per_stage[s] for s in seen if s in per_stage), np.zeros(vocab, dtype=np.int64))
        return unigram.record_nll(held, unigram.log_probs(c))[0]

    return score


def run(params: Params) -> None:
    import torch

    tok = load_tokenizer(params.tokenizer.out.dir)
    held, texts = _held_out(params)
    if held.empty:
        raise CurllError(
            "no held-out records of the evaluated types", file=params.split.out.records, field="split"
        )
    device = "cuda" if params.evaluate.infer.device != "cpu" and torch.cuda.is_available() else "cpu"
    types = held["type"].tolist()
    baseline = _unigrams(params, tok, texts, types)
    parts = []
    for model, load in tqdm(_models(params, len(tok)), desc="evaluate_loss: models", unit="model"):
        nll, n = record_nll(load(), texts, types, tok, context=params.train.context,
                            micro_batch=params.evaluate.loss.micro_batch, device=device)  # fmt: skip
        uni = np.where(n > 0, baseline(model), np.nan)  # the records the model could score
        parts.append(held.assign(run=model.name, order=model.order, seed=model.seed,
                                 trained_to=model.trained_to, nll=nll, tokens=n,
                                 unigram_nll=uni))  # fmt: skip
    losses = pd.concat(parts, ignore_index=True)
    write_table(losses, params.evaluate.out.losses, LossSchema)
    unfit = int(np.isnan(parts[0]["nll"].to_numpy()).sum())
    say(f"evaluate_loss: {len(held)} records ({', '.join(params.evaluate.loss.splits)}) x {len(parts)} models"
        f" on {device}; {unfit} too long for train.context={params.train.context}")  # fmt: skip
