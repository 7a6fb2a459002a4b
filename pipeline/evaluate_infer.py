"""DVC stage ``evaluate_infer``: every trained model (and an untrained one) answers the test items.

Reads the test split of ``split.out.records``, the indicators, the model folders
``train.out.models/seed-<seed>/<order>/<stages>`` of the first ``evaluate.judge_seeds`` of
``train.seeds`` (or, when ``evaluate.checkpoints.models`` lists any, every one of those, each
asked in its own layout with its own tokenizer: :mod:`curll.evaluate.models`) and the
tokenizer; writes
``evaluate.out.items`` (the sampled test questions; one whose prompt is over
``evaluate.infer.prompt_tokens`` even with its passage cut is kept there with its ``dropped``
reason, counted, and asked of no model) and ``evaluate.out.answers``: ``evaluate.repeats`` answers
of every item by every model (repeat r sampled with ``evaluate.infer.sampling.seed`` + r).
With ``evaluate.untrained`` an untrained model per seed answers too: the baseline of zero-shot
forward transfer. An item is dropped when its prompt does not fit in any of the layouts and
tokenizers asked.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import pandas as pd

from curll.artifacts import read_table, write_tables
from curll.artifacts import records as records_of
from curll.config import Params
from curll.errors import CurllError
from curll.evaluate.infer import answer
from curll.evaluate.items import build_items, drop_unfit
from curll.evaluate.models import scored_models, tokenizers, untrained_models
from curll.schemas import IndicatorSchema, RecordSchema
from curll.schemas.evaluate import UNTRAINED, AnswerSchema, ItemSchema
from curll.train.tokenizer import load_tokenizer
from pipeline.tools.console import say


def run(params: Params) -> None:
    p = params.evaluate
    records = read_table(params.split.out.records, RecordSchema)
    indicators = read_table(params.taxonomy.out.indicators, IndicatorSchema)
    items = build_items(records, indicators, p.types, max_per_type=p.max_per_type, seed=p.seed)
    if items.empty:
        raise CurllError("no test items of the evaluated types", file=params.split.out.records, field="split")
    tok = load_tokenizer(params.tokenizer.out.dir)
    seeds = params.train.seeds[: p.judge_seeds]
    runs = scored_models(params, seeds)
    for asker, layout in {id(t): (t, lay) for t, lay in tokenizers(params, runs, tok).values()}.values():
        items = drop_unfit(items, asker, p.infer.prompt_tokens, layout)
    asked = items[items["dropped"] == ""]
    if len(asked) < len(items):
        by = Counter(f"stage {r['stage']} {r['type']}" for r in records_of(items[items["dropped"] != ""]))
        say(f"evaluate_infer: {len(items) - len(asked)} items dropped, their prompt over "
            f"evaluate.infer.prompt_tokens={p.infer.prompt_tokens} even with the passage cut: "
            + ", ".join(f"{k}: {n}" for k, n in sorted(by.items())))  # fmt: skip
    if asked.empty:
        raise CurllError("every test item's prompt is too long", field="evaluate.infer.prompt_tokens")

    parts = [answer(model, asked, p.infer, params.llm.cache, p.repeats) for model in runs]
    if p.untrained:
        from curll.model.hf import save_hf

        for u in untrained_models(params, sorted({m.seed for m in runs}), tok):
            with tempfile.TemporaryDirectory() as tmp:
                model = u.model._replace(folder=Path(tmp) / UNTRAINED)
                save_hf(u.build(), u.tokenizer, model.folder)
                parts.append(answer(model, asked, p.infer, params.llm.cache, p.repeats))
    answers = pd.concat(parts, ignore_index=True)
    write_tables([(items, p.out.items, ItemSchema), (answers, p.out.answers, AnswerSchema)])
    rejected = int((answers["status"] != "ok").sum())
    times = f" x {p.repeats} repeats" if p.repeats > 1 else ""
    say(f"evaluate_infer: {len(asked)} items x {len(parts)} models{times} ({rejected} answers rejected)")
