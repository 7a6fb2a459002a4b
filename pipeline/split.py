"""DVC stage ``split``: rate a sample of units with the LLM, pick test / validation / train, decontaminate.

Reads the verify tables, the indicators and ``params.split`` / ``params.llm``; writes
``out.ratings`` (one LLM rating per rated unit: ``split.rate_per_indicator`` per indicator and
type, with provenance), ``out.units`` (split, rank, contaminated), ``out.records`` (chat-format
records of every kept instance, with its split), ``out.rejects`` (contaminated train units) and
``out.stats``.
"""

from __future__ import annotations

from curll.artifacts import read_table, write_json, write_tables
from curll.config import Params
from curll.llm.factory import engine_from_params, make_task
from curll.schemas import (
    ContextSchema,
    IndicatorSchema,
    InstructionSchema,
    QAPairSchema,
    RatingSchema,
    RecordSchema,
    RejectSchema,
    UnitSchema,
)
from curll.split.core import require_records, select, split_stats
from curll.split.records import build_records
from curll.split.units import build_units, rate, rated_sample, rating_schema
from pipeline.report import say


def run(params: Params) -> None:
    p, v = params.split, params.verify.out
    tables = {
        "context": read_table(v.contexts, ContextSchema),
        "ir": read_table(v.ir, InstructionSchema),
        "cqa": read_table(v.cqa, QAPairSchema),
        "csqa": read_table(v.csqa, QAPairSchema),
    }
    indicators = read_table(params.taxonomy.out.indicators, IndicatorSchema)
    units = build_units(tables)
    engine = engine_from_params(params.llm, models=params.llm_models, desc="split: rate")
    task = make_task(params.llm, p.prompt, rating_schema(params.llm.profile.max_chars))
    ratings = rate(rated_sample(units, p.rate_per_indicator, p.seed), indicators, engine, task)
    placed, rejects = select(units, ratings, p)
    records = build_records(tables, placed[~placed["contaminated"]], indicators, system=p.system_prompt)
    require_records(records, sorted(set(indicators["stage"])), p)

    write_tables([
        (ratings, p.out.ratings, RatingSchema),
        (placed, p.out.units, UnitSchema),
        (records, p.out.records, RecordSchema),
        (rejects, p.out.rejects, RejectSchema),
    ])  # fmt: skip
    stats = split_stats(placed, ratings, records)
    write_json(p.out.stats, stats)
    say("split: records " + ", ".join(f"{k} {n}" for k, n in stats["records"].items()))
