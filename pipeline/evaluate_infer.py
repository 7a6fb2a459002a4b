"""DVC stage ``evaluate_infer``: every trained model (and an untrained one) answers the test items.

Reads the test split of ``split.out.records``, the indicators, the model folders
``train.out.models/seed-<seed>/<order>/<stages>`` of the first ``evaluate.judge_seeds`` of
``train.seeds`` and the tokenizer; writes
``evaluate.out.items`` (the sampled test questions; one whose prompt is over
``evaluate.infer.prompt_tokens`` even with its passage cut is kept there with its ``dropped``
reason, counted, and asked of no model) and ``evaluate.out.answers``: ``evaluate.repeats`` answers
of every item by every model (repeat r sampled with ``evaluate.infer.sampling.seed`` + r).
With ``evaluate.untrained`` an untrained model of ``train.preset`` per seed answers too: the
baseline of zero-shot forward transfer.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from curll.artifacts import read_table, write_tables
from curll.artifacts import records as records_of
from curll.config import Params
from curll.errors import CurllError
from curll.evaluate.infer import answer
from curll.evaluate.items import build_items, drop_unfit
from curll.schemas import IndicatorSchema, RecordSchema
from curll.schemas.evaluate import UNTRAINED, AnswerSchema, ItemSchema
from curll.train.orders import SavedModel, saved_models, untrained, untrained_model
from curll.train.tokenizer import load_tokenizer
from pipeline.tools.console import say


def _tokenizer(params: Params) -> Any:
    return load_tokenizer(params.tokenizer.out.dir)


def _untrained(params: Params, tok: Any, seed: int, folder: Path) -> SavedModel:
    from curll.model.hf import save_hf

    save_hf(untrained_model(params.train, len(tok), seed), tok, folder)
    return untrained(seed, folder)


def run(params: Params) -> None:
    p = params.evaluate
    records = read_table(params.split.out.records, RecordSchema)
    indicators = read_table(params.taxonomy.out.indicators, IndicatorSchema)
    items = build_items(records, indicators, p.types, max_per_type=p.max_per_type, seed=p.seed)
    if items.empty:
        raise CurllError("no test items of the evaluated types", file=params.split.out.records, field="split")
    tok = _tokenizer(params)
    items = drop_unfit(items, tok, p.infer.prompt_tokens)
    asked = items[items["dropped"] == ""]
    if len(asked) < len(items):
        by = Counter(f"stage {r['stage']} {r['type']}" for r in records_of(items[items["dropped"] != ""]))
        say(f"evaluate_infer: {len(items) - len(asked)} items dropped, their prompt over "
            f"evaluate.infer.prompt_tokens={p.infer.prompt_tokens} even with the passage cut: "
            + ", ".join(f"{k}: {n}" for k, n in sorted(by.items())))  # fmt: skip
    if asked.empty:
        raise CurllError("every test item's prompt is too long", field="evaluate.infer.prompt_tokens")

    seeds = params.train.seeds[: p.judge_seeds]
    runs = saved_models(params.train.out.models, seeds)
    if not runs:
        raise CurllError(f"no trained models of seeds {list(seeds)}: run the train stage",
                         file=params.train.out.models)  # fmt: skip
    parts = [answer(model, asked, p.infer, params.llm.cache, p.repeats) for model in runs]
    if p.untrained:
        for seed in seeds:
            with tempfile.TemporaryDirectory() as tmp:
                model = _untrained(params, tok, seed, Path(tmp) / UNTRAINED)
                parts.append(answer(model, asked, p.infer, params.llm.cache, p.repeats))
    answers = pd.concat(parts, ignore_index=True)
    write_tables([(items, p.out.items, ItemSchema), (answers, p.out.answers, AnswerSchema)])
    rejected = int((answers["status"] != "ok").sum())
    times = f" x {p.repeats} repeats" if p.repeats > 1 else ""
    say(f"evaluate_infer: {len(asked)} items x {len(parts)} models{times} ({rejected} answers rejected)")
