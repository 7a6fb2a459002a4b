"""The split stage from the verified tables to its four tables, in bounded memory.

Contract of :func:`split_files`: reads the verified table of every instance type
(:mod:`curll.instances`) into a scratch :class:`~curll.split.workspace.Workspace` (texts on
disk, ids in memory), indexes the units (the seeded types' instances), has ``rate`` rate a
seeded sample of them (``split.rate_per_indicator`` per stage, indicator and type), places
every unit (:func:`curll.split.core.select`: test, validation, train, decontamination, the
top-up to ``split.min_test_records``), lays out the chat records of the kept units and writes
``ratings``, ``units``, ``records`` (sorted on disk), ``rejects`` and the ``stats`` file
(:func:`curll.split.core.split_stats`) together, or none of them when anything fails, a stage
without records included. Returns the stats.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pandera.pandas as pa
from tqdm.auto import tqdm

from curll.artifacts import empty_table, json_text, read_table
from curll.config.verify import SplitParams
from curll.instances import TYPES, seeded
from curll.schemas import RatingSchema, RecordSchema, RejectSchema, UnitSchema, known_indicators
from curll.split.core import RecordCounts, record_counts, require_records, select, split_stats
from curll.split.records import indicator_info, record_frame
from curll.split.units import rated_sample, records_made, unit_index
from curll.split.workspace import Workspace
from curll.streaming import iter_table, write_table_streams

IDS = ["instance_id", "stage", "indicator_id"]
#: a table's path and schema
Table = tuple[str | Path, type[pa.DataFrameModel]]


def split_files(
    tables: Mapping[str, Table],
    indicators: pd.DataFrame,
    p: SplitParams,
    rate: Callable[[pd.DataFrame], pd.DataFrame],
) -> dict[str, Any]:
    """See the module docstring. ``tables``: every instance type's verified table; ``rate``:
    the units to rate (with their ``content``) -> their ratings (RatingSchema)."""
    ids = {k: read_table(*tables[k], columns=IDS) for k in seeded()}
    taxonomy = set(indicators["indicator_id"])
    for kind, df in ids.items():
        known_indicators(df, taxonomy, tables[kind][0])
    units = unit_index(ids, sources={k: tables[k][0] for k in ids})
    ws = Workspace()
    try:
        for kind, (path, schema) in tables.items():
            t = TYPES[kind]
            texts = [t.link, "q_index", t.prompt, t.reply] if t.on else ["instance_id", *t.columns]
            ws.add(kind, iter_table(path, schema, columns=texts))
        sample = rated_sample(units, p.rate_per_indicator, p.seed)
        contents = [ws.content(u, t) for u, t in zip(sample["unit_id"], sample["type"], strict=True)]
        ratings = rate(sample.assign(content=contents))
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

        stats: dict[str, Any] = {}

        def stats_file() -> dict[str | Path, str]:  # after the last chunk: the counts are in
            stats.update(split_stats(placed, ratings, counts))
            return {p.out.stats: json_text(stats)}

        write_table_streams([
            (p.out.ratings, RatingSchema),
            (p.out.units, UnitSchema),
            (p.out.records, RecordSchema),
            (p.out.rejects, RejectSchema),
        ], chunks(), texts=stats_file)  # fmt: skip
    finally:
        ws.close()
    return stats
