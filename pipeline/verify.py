"""DVC stage ``verify``: filter the generated instances and measure the data (paper Appendix B).

Reads the generate_merge tables and the verify_encoder model (or the full source encoder,
per ``verify.semantic.encoder``); writes the kept ``out.contexts`` / ``ir`` / ``cqa`` /
``csqa`` (generate's schemas), ``out.rejects`` (every dropped row with its reason),
``out.metrics`` (counts, dedup, diversity, readability) and per-stage CSVs in ``out.plots``.
The passage length range (``verify.context_words``) and the content checks
(``verify.content``: seed word, on topic, grounded, degenerate) are those of the active
``llm.use`` profile; on-topic compares each instance with its indicator from the taxonomy.
A type and stage keeping less than ``verify.min_yield`` stops the stage with its reasons.
"""

from __future__ import annotations

from pathlib import Path

from curll.artifacts import atomic_path, read_table, records, write_json, write_tables
from curll.config import Params
from curll.schemas import (
    ContextSchema,
    GenerationSchema,
    IndicatorSchema,
    InstructionSchema,
    QAPairSchema,
    RejectSchema,
)
from curll.verify.content import indicator_text
from curll.verify.core import plot_tables, verify
from curll.verify.encoder import load_encoder
from curll.yields import check_yields, public
from pipeline.report import say

SCHEMAS = {"context": ContextSchema, "ir": InstructionSchema, "cqa": QAPairSchema, "csqa": QAPairSchema}


def run(params: Params) -> None:
    p, src = params.verify, params.generate_merge.out
    inputs = {"context": src.contexts, "ir": src.ir, "cqa": src.cqa, "csqa": src.csqa}
    tables = {k: read_table(path, SCHEMAS[k]) for k, path in inputs.items()}
    gens = read_table(src.generations, GenerationSchema)
    sem = p.semantic
    where = params.verify_encoder.out.model if sem.encoder == "model2vec" else params.verify_encoder.source
    encoder = load_encoder(sem.encoder, where, batch_size=sem.batch_size)
    words = p.context_words.for_profile(params.llm.use)
    qa = {"cqa": params.generate.cqa_pairs, "csqa": params.generate.csqa_pairs}
    indicators = read_table(params.taxonomy.out.indicators, IndicatorSchema)
    topics = {r["indicator_id"]: indicator_text(r) for r in records(indicators)}
    checks = p.content.for_profile(params.llm.use)
    result = verify(tables, gens, encoder, p, words=words, qa_pairs=qa, checks=checks, topics=topics)
    check_yields("verify", result.metrics["yields"], p.min_yield, key="verify.min_yield")
    result.metrics["yields"] = public(result.metrics["yields"])

    outs = {"context": p.out.contexts, "ir": p.out.ir, "cqa": p.out.cqa, "csqa": p.out.csqa}
    kept = [(df, outs[kind], SCHEMAS[kind]) for kind, df in result.kept.items()]
    write_tables([*kept, (result.rejects, p.out.rejects, RejectSchema)])
    for name, frame in plot_tables(result.metrics).items():
        with atomic_path(Path(p.out.plots) / f"{name}.csv") as tmp:
            frame.to_csv(tmp, index=False)
    write_json(p.out.metrics, result.metrics)
    counts = result.metrics["counts"]
    say("verify: kept " + ", ".join(f"{k} {v['kept']}/{v['in']}" for k, v in counts.items()))
