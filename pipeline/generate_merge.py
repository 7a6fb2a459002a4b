"""DVC stage ``generate_merge``: join the generate shards into one table and typed instances.

Reads every shard of ``generate.out.shards`` and the seeds they name; writes
``out.generations`` (every request, rejects included), ``out.contexts``, ``out.ir``,
``out.cqa``, ``out.csqa`` and ``out.stats`` (requests by task and status, instances per stage,
tokens). Streams: memory holds a chunk of rows per shard, not the tables
(:mod:`curll.generate.merge`); the outputs appear together or not at all.
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
from tqdm.auto import tqdm

from curll.artifacts import write_json
from curll.config import Params
from curll.generate.merge import MergeStats, count_rows, merged, seed_fields, shard_paths, split_instances
from curll.schemas import ContextSchema, GenerationSchema, InstructionSchema, QAPairSchema
from curll.streaming import write_table_streams
from pipeline.report import say


def run(params: Params) -> None:
    out, shards, n = params.generate_merge.out, params.generate.out.shards, params.generate.shards
    total = count_rows(shard_paths(shards, n))
    seeds = seed_fields(params.seeds.out.seeds, shards, n)
    stats = MergeStats()

    def chunks() -> Iterator[list[pd.DataFrame]]:
        with tqdm(total=total, desc="generate_merge", unit="row") as bar:
            for gens in merged(shards, n):
                tables = split_instances(gens, seeds)
                stats.add(gens, tables)
                bar.update(len(gens))
                yield [gens, tables["contexts"], tables["ir"], tables["cqa"], tables["csqa"]]

    write_table_streams([
        (out.generations, GenerationSchema),
        (out.contexts, ContextSchema),
        (out.ir, InstructionSchema),
        (out.cqa, QAPairSchema),
        (out.csqa, QAPairSchema),
    ], chunks())  # fmt: skip
    result = stats.result()
    write_json(out.stats, result)
    say(
        f"generate_merge: {total} requests -> "
        + ", ".join(f"{k} {v}" for k, v in result["instances"].items())
    )
