"""DVC stage ``generate_merge``: join the generate shards into one table and typed instances.

Reads every shard of ``generate.out.shards`` and the seeds table; checks that the shards hold
exactly the requests that table plans (:mod:`curll.generate.plan`); writes
``out.generations`` (every request, rejects included), one table per instance type in
``out.tables`` (``<type>.parquet``: context, ir, cqa, csqa) and ``out.stats`` (requests by
task and status, instances per type and stage, tokens). Streams: memory holds a chunk of rows
per shard, not the tables (:mod:`curll.generate.merge`); the outputs appear together or not
at all.
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
from tqdm.auto import tqdm

from curll.artifacts import json_text
from curll.config import Params
from curll.generate.merge import (
    MergeStats,
    Parents,
    count_rows,
    merged,
    seed_fields,
    shard_paths,
    split_instances,
)
from curll.generate.plan import check_plan
from curll.instances import TYPES
from curll.schemas import GenerationSchema, instance_schema
from curll.streaming import write_table_streams
from pipeline.tools.console import say


def run(params: Params) -> None:
    out, shards, n = params.generate_merge.out, params.generate.out.shards, params.generate.shards
    paths = shard_paths(shards, n)
    total = count_rows(paths)
    check_plan(paths, params.seeds.out.seeds)
    seeds = seed_fields(params.seeds.out.seeds, shards, n)
    stats = MergeStats()
    parents = Parents(shards)

    def chunks() -> Iterator[list[pd.DataFrame]]:
        with tqdm(total=total, desc="generate_merge", unit="row") as bar:
            for gens in merged(shards, n):
                tables = split_instances(gens, seeds)
                parents.add(tables)
                stats.add(gens, tables)
                bar.update(len(gens))
                yield [gens, *(tables[k] for k in TYPES)]
        parents.check()  # after the last chunk, before anything is renamed into place

    typed = [(out.table(k), instance_schema(k)) for k in TYPES]
    write_table_streams([(out.generations, GenerationSchema), *typed], chunks(),
                        texts=lambda: {out.stats: json_text(stats.result())})  # fmt: skip
    result = stats.result()
    say(
        f"generate_merge: {total} requests -> "
        + ", ".join(f"{k} {v}" for k, v in result["instances"].items())
    )
