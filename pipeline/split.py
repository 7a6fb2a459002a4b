"""DVC stage ``split``: rate a sample of units with the LLM, pick test / validation / train, decontaminate.

Reads the verify tables (every instance type's), the indicators and ``params.split`` / ``params.llm``; writes
``out.ratings`` (one LLM rating per rated unit: ``split.rate_per_indicator`` per indicator and
type, with provenance), ``out.units`` (split, rank, contaminated), ``out.records`` (chat-format
records of every kept instance, with its split), ``out.rejects`` (contaminated train units) and
``out.stats``. Memory holds the units' ids and the rated sample: the texts go to a scratch
SQLite file (:class:`~curll.split.workspace.Workspace`), where the records are also sorted, and
are read and written a batch at a time; the four tables appear together or not at all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pandas as pd
from tqdm.auto import tqdm

from curll.artifacts import empty_table, read_table, write_json
from curll.config import Params
from curll.instances import TYPES, seeded
from curll.llm.factory import engine_from_params, make_task
from curll.schemas import (
    IndicatorSchema,
    RatingSchema,
    RecordSchema,
    RejectSchema,
    UnitSchema,
    instance_schema,
)
from curll.split.core import RecordCounts, record_counts, require_records, select, split_stats
from curll.split.records import indicator_info, record_frame
from curll.split.units import RATING, rate, rated_sample, records_made, unit_index
from curll.split.workspace import Workspace
from curll.streaming import iter_table, write_table_streams
from pipeline.report import say

IDS = ["instance_id", "stage", "indicator_id"]


def run(params: Params) -> None:
    p, v = params.split, params.verify.out
    tables = {k: (v.table(k), instance_schema(k)) for k in TYPES}
    indicators = read_table(params.taxonomy.out.indicators, IndicatorSchema)
    ws = Workspace()
    try:
        for kind, (path, schema) in tables.items():
            t = TYPES[kind]
            texts = [t.link, "q_index", t.prompt, t.reply] if t.on else ["instance_id", *t.columns]
            ws.add(kind, iter_table(path, schema, columns=texts))
        units = unit_index({k: read_table(*tables[k], columns=IDS) for k in seeded()})
        sample = rated_sample(units, p.rate_per_indicator, p.seed)
        sample = sample.assign(
            content=[ws.content(u, t) for u, t in zip(sample["unit_id"], sample["type"], strict=True)]
        )
        rater, llm = params.split.rater, params.llm
        task = make_task(params, RATING, profile=rater)
        with engine_from_params(llm, models=params.llm_models, desc="split: rate", profile=rater) as engine:
            ratings = rate(sample, indicators, engine, task)
        made = records_made(units, ws.qa_counts()) if p.min_test_records else None  # for the top-up
        placed, rejects = select(units, ratings, p, content=ws.content, records=made)
        kept = placed[~placed["contaminated"]]
        split_of = dict(zip(kept["unit_id"], kept["split"], strict=True))
        info = indicator_info(indicators)
        for kind, (path, schema) in tables.items():
            for chunk in tqdm(iter_table(path, schema), desc=f"split: {kind} records", unit="batch"):
                ws.add_records(record_frame(kind, chunk, split_of, info, ws.passage, system=p.system_prompt))
        counts: RecordCounts = Counter()
        stages = sorted(set(indicators["stage"].tolist()))

        def chunks() -> Iterator[list[pd.DataFrame]]:
            small = [ratings, placed, rejects]
            for records in ws.sorted_records():
                counts.update(record_counts(records))
                yield [small[0], small[1], records, small[2]]
                small = [empty_table(s) for s in (RatingSchema, UnitSchema, RejectSchema)]
            require_records(counts, stages, p)  # no record at all fails here: nothing is renamed into place

        write_table_streams([
            (p.out.ratings, RatingSchema),
            (p.out.units, UnitSchema),
            (p.out.records, RecordSchema),
            (p.out.rejects, RejectSchema),
        ], chunks())  # fmt: skip
    finally:
        ws.close()
    stats = split_stats(placed, ratings, counts)
    write_json(p.out.stats, stats)
    say("split: records " + ", ".join(f"{k} {n}" for k, n in stats["records"].items()))
