"""Instance generation: passages and IR from seeds, CQA and CSQA on passages, sharded and merged."""

from curll.generate.merge import generation_stats, read_shards, split_instances
from curll.generate.shard import generate_shard, shard_of, shard_path_name
from curll.generate.tasks import check, task_schema

__all__ = [
    "check",
    "generate_shard",
    "generation_stats",
    "read_shards",
    "shard_of",
    "shard_path_name",
    "split_instances",
    "task_schema",
]
