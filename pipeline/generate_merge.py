"""DVC stage ``generate_merge``: join the generate shards into one table and typed instances.

Reads every shard of ``generate.out.shards`` and the seeds; writes ``out.generations``
(every request, rejects included), ``out.contexts``, ``out.ir``, ``out.cqa``, ``out.csqa``
and ``out.stats`` (requests by task and status, instances per stage, tokens).
"""

from __future__ import annotations

from curll.artifacts import read_table, write_json, write_tables
from curll.config import Params
from curll.generate.merge import generation_stats, read_shards, split_instances
from curll.schemas import ContextSchema, GenerationSchema, InstructionSchema, QAPairSchema, SeedSchema
from pipeline.report import say


def run(params: Params) -> None:
    out = params.generate_merge.out
    gens = read_shards(params.generate.out.shards, params.generate.shards)
    tables = split_instances(gens, read_table(params.seeds.out.seeds, SeedSchema))
    write_tables([
        (gens, out.generations, GenerationSchema),
        (tables["contexts"], out.contexts, ContextSchema),
        (tables["ir"], out.ir, InstructionSchema),
        (tables["cqa"], out.cqa, QAPairSchema),
        (tables["csqa"], out.csqa, QAPairSchema),
    ])  # fmt: skip
    stats = generation_stats(gens, tables)
    write_json(out.stats, stats)
    say(
        f"generate_merge: {len(gens)} requests -> "
        + ", ".join(f"{k} {v}" for k, v in stats["instances"].items())
    )
