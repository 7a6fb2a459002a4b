"""The request plan the generate shards must follow, checked before they are merged.

Contract of :func:`check_plan` (shards as :func:`curll.generate.merge.shard_paths` lists them,
the seeds table they were made from): a :class:`~curll.errors.CurllError` (one line, naming the
file, and the row where there is one) unless

- every row sits in the shard of its seed (``shard_of(seed_id, n)``, :mod:`curll.generate.shard`);
- the rows made from seeds (no ``parent_id``) are exactly one request of its own type per seed
  of the seeds table: none missing, none for a seed the table lacks or of another type;
- every accepted passage (a type others are made on) has exactly one request of each type made
  on it, and no such request names a passage that is not an accepted one.

So a shard cut short, a shard of another seeds table, or a row moved between shards is refused
before anything is written. Memory: the key columns of a batch of rows at a time, and two arrow string
arrays of keys (seed/type, passage/type) over all shards, never the text.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as arrow
import pyarrow.compute as pc

from curll.errors import CurllError
from curll.generate.shard import instance_id, shard_of
from curll.instances import made_on
from curll.schemas.generation import GenerationSchema, SeedSchema
from curll.streaming import iter_table

_COLUMNS = ["seed_id", "task", "parent_id", "status", "request_key"]


def check_plan(paths: list[Path], seeds_path: str | Path) -> None:
    """See the module docstring."""
    n = len(paths)
    seeded: list[str] = []  # "seed_id|task" of every row made from a seed
    asked: list[str] = []  # "parent_id|task" of every row made on a passage
    owed: list[str] = []  # "passage id|task" every accepted passage is owed
    for i, path in enumerate(paths):
        for df in iter_table(path, GenerationSchema, columns=_COLUMNS):  # validated: bad rows named
            rows = zip(df.index, *(df[c].tolist() for c in _COLUMNS), strict=True)
            for row, seed, task, parent, status, key in rows:
                if shard_of(seed, n) != i:
                    raise CurllError(f"a row of seed {seed} is in shard {i} but that seed belongs "
                                     f"to shard {shard_of(seed, n)} of {n}", file=path, row=row,
                                     field="seed_id")  # fmt: skip
                if parent:
                    asked.append(f"{parent}|{task}")
                    continue
                seeded.append(f"{seed}|{task}")
                if status == "ok":
                    owed += [f"{instance_id(key)}|{qa}" for qa in made_on(task)]
    where = paths[0].parent if paths else Path()
    _same(arrow.array(seeded, arrow.string()), _seed_plan(seeds_path), where,
          "seed", f"in the seeds table ({seeds_path})")  # fmt: skip
    _same(arrow.array(asked, arrow.string()), arrow.array(owed, arrow.string()), where,
          "passage", "an accepted passage of the shards")  # fmt: skip


def _seed_plan(seeds_path: str | Path) -> arrow.Array:
    """Every seed of the table as ``seed_id|type`` (two columns streamed)."""
    parts = [
        arrow.array((df["seed_id"] + "|" + df["type"]).tolist(), arrow.string())
        for df in iter_table(seeds_path, SeedSchema, columns=["seed_id", "type"])
    ]
    return arrow.concat_arrays(parts) if parts else arrow.array([], arrow.string())


def _same(have: arrow.Array, want: arrow.Array, where: Path, noun: str, source: str) -> None:
    """``have`` holds each key of ``want`` once and nothing else (keys ``<id>|<task>``, the id a
    ``noun``); else a CurllError naming the first key at fault and how many there are."""
    counts = pc.value_counts(have)
    twice = counts.filter(pc.greater(counts.field("counts"), 1)).field("values")
    if len(twice):
        thing, task = str(twice[0]).split("|")
        raise CurllError(f"the shards hold more than one {task} request for {noun} {thing}{_all(twice)}",
                         file=where)  # fmt: skip
    missing = pc.filter(want, pc.invert(pc.is_in(want, value_set=have)))
    if len(missing):
        thing, task = str(missing[0]).split("|")
        raise CurllError(f"no shard holds the {task} request for {noun} {thing}{_all(missing)}: the "
                         "shards were cut short or made from other inputs; rerun generate",
                         file=where)  # fmt: skip
    extra = pc.filter(have, pc.invert(pc.is_in(have, value_set=want)))
    if len(extra):
        thing, task = str(extra[0]).split("|")
        raise CurllError(f"a {task} request names {noun} {thing}, which is not {source}{_all(extra)}: "
                         "the shards were made from other inputs; rerun generate", file=where)  # fmt: skip


def _all(keys: arrow.Array) -> str:
    return f" ({len(keys)} in all)" if len(keys) > 1 else ""
