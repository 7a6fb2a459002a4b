"""DVC stage ``evaluate_loss``: every model's loss on every stage's held-out answers (no LLM).

Reads the ``evaluate.loss.splits`` splits of ``split.out.records`` (the records of
``evaluate.types``), the tokenizer, every model folder
``train.out.models/seed-<seed>/<order>/<stages>`` (every seed; or the checkpoints of
``evaluate.checkpoints``, each scored in its own layout with its own tokenizer:
:mod:`curll.evaluate.models`) and, with ``evaluate.untrained``, an untrained model per seed
(as ``evaluate_infer`` makes it). Writes
``evaluate.out.losses`` (LossSchema): per record and model, the summed NLL of the answer tokens
given the prompt, as in training (:func:`curll.evaluate.nll.record_nll`), with
``train.context``, and beside it ``unigram_nll``: the same targets' NLL under the add-one
unigram of the answer tokens that model was trained on (:mod:`curll.evaluate.unigram`; the
untrained model's: uniform over the vocabulary; a checkpoint's: of the train split's stages
its order and stages say it saw, in its tokenizer and layout). Deterministic: no sampling.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from curll.artifacts import write_table
from curll.config import Params
from curll.errors import CurllError
from curll.evaluate import unigram
from curll.evaluate.layouts import passages_of
from curll.evaluate.models import scored_models, tokenizers, untrained_models
from curll.evaluate.nll import record_nll
from curll.schemas.evaluate import LossSchema
from curll.train.orders import SavedModel
from curll.train.records import RecordFile
from curll.train.tokenizer import load_tokenizer
from pipeline.tools.console import say


def _held_out(params: Params) -> tuple[pd.DataFrame, list[str], dict[str, str]]:
    """The scored records (record_id, split, stage, type, unit_id), sorted, their messages, and
    the passages of their splits (unit id -> text)."""
    metas, texts = [], []
    passages: dict[str, str] = {}
    for split in params.evaluate.loss.splits:
        rf = RecordFile(params.split.out.records, split)
        meta = rf.meta[rf.meta["type"].isin(params.evaluate.types)].sort_values("position")
        metas.append(meta)
        texts += list(rf.messages(meta["position"].to_numpy()))
        passages |= rf.passages()
    held = pd.concat(metas, ignore_index=True)[["record_id", "split", "stage", "type", "unit_id"]]
    return held, texts, passages


def _models(params: Params, tok: Any) -> list[tuple[SavedModel, Callable[[], Any], Any, str]]:
    """Every scored model (:func:`curll.evaluate.models.scored_models`, every seed) and the
    untrained one of each seed: (entry, loader, tokenizer, layout)."""
    from curll.model.hf import load_hf

    runs = scored_models(params)
    toks = tokenizers(params, runs, tok)
    out: list[tuple[SavedModel, Callable[[], Any], Any, str]] = [
        (m, partial(load_hf, m.folder), *toks[m.folder]) for m in runs
    ]
    if params.evaluate.untrained:
        out += [(u.model, u.build, u.tokenizer, u.model.layout)
                for u in untrained_models(params, sorted({m.seed for m in runs}), tok, toks)]  # fmt: skip
    return out


def _unigrams(
    params: Params, tok: Any, layout: str, held: pd.DataFrame, held_texts: list[str], held_passages: list[str]
) -> Callable[[SavedModel], np.ndarray]:
    """model -> (R,) summed unigram NLL of each held-out record's targets (NaN where none), in
    ``tok`` and ``layout``: the add-one unigram of the train answers of the stages that model
    saw, counted once a stage."""
    from curll.chat import CUT
    from curll.evaluate.layouts import encode
    from curll.train.data import fit

    cut = tok(CUT, add_special_tokens=False)["input_ids"]
    train = RecordFile(params.split.out.records, "train")
    train_passages = train.passages()
    vocab = len(tok)
    targets = encode(layout, held_texts, held["type"].tolist(), tok, held_passages)
    per_stage: dict[int, np.ndarray] = {}
    for stage in sorted(int(s) for s in train.meta["stage"].unique()):
        meta = train.meta[train.meta["stage"] == stage].sort_values("position")
        texts = list(train.messages(meta["position"].to_numpy()))
        docs = encode(layout, texts, meta["type"].tolist(), tok, passages_of(meta, train_passages))
        kept = [d for d in docs if fit(d, params.train.context, cut) is not None]  # as the trainer keeps them
        per_stage[stage] = unigram.counts(kept, vocab)

    def score(model: SavedModel) -> np.ndarray:
        c = sum((per_stage[s] for s in model.seen if s in per_stage), np.zeros(vocab, dtype=np.int64))
        return unigram.record_nll(targets, unigram.log_probs(c))[0]

    return score


def run(params: Params) -> None:
    import torch

    tok = load_tokenizer(params.tokenizer.out.dir)
    held, texts, passages = _held_out(params)
    if held.empty:
        raise CurllError(
            "no held-out records of the evaluated types", file=params.split.out.records, field="split"
        )
    device = "cuda" if params.evaluate.infer.device != "cpu" and torch.cuda.is_available() else "cpu"
    types, held_passages = held["type"].tolist(), passages_of(held, passages)
    baselines: dict[tuple[int, str], Callable[[SavedModel], np.ndarray]] = {}  # by tokenizer and layout
    parts = []
    for model, load, mtok, layout in tqdm(_models(params, tok), desc="evaluate_loss: models", unit="model"):
        nll, n = record_nll(load(), texts, types, mtok, context=params.train.context,
                            micro_batch=params.evaluate.loss.micro_batch, device=device,
                            layout=layout, passages=held_passages)  # fmt: skip
        key = (id(mtok), layout)
        if key not in baselines:
            baselines[key] = _unigrams(params, mtok, layout, held, texts, held_passages)
        uni = np.where(n > 0, baselines[key](model), np.nan)  # the records the model could score
        parts.append(held.drop(columns="unit_id").assign(run=model.name, order=model.order, seed=model.seed,
                                 trained_to=model.trained_to, nll=nll, tokens=n,
                                 unigram_nll=uni))  # fmt: skip
    losses = pd.concat(parts, ignore_index=True)
    write_table(losses, params.evaluate.out.losses, LossSchema)
    unfit = int(np.isnan(parts[0]["nll"].to_numpy()).sum())
    say(f"evaluate_loss: {len(held)} records ({', '.join(params.evaluate.loss.splits)}) x {len(parts)} models"
        f" on {device}; {unfit} too long for train.context={params.train.context}")  # fmt: skip
