"""Merge the generate stage's shards and split them into typed instance tables, in bounded memory.

Contract of :func:`merged`: reads ``generations-<i>-of-<n>.parquet`` for every i < n from
``shard_dir`` (a missing shard is an error naming it), checks that no request appears twice and
that the shards are of one run (one model, one prompt version per task), and yields the
generations in chunks of at most ``chunk_rows``, in (task, stage, indicator_id, seed_id,
parent_id) order over all shards (:data:`ORDER`). Each
shard is written in that order (``curll.generate.shard.sort_rows``), so the shards are merged
as sorted streams: memory holds a batch per shard, plus the request keys and seed ids (for
the duplicate check and the seed join), never the text of the table.
:func:`split_instances` turns a chunk into the accepted instances of every instance type
(:mod:`curll.instances`; one item of a list answer a row), each joined with its seed's template
and word; rejected requests stay only in generations. :class:`MergeStats` adds up the stage's
stats chunk by chunk.
"""

from __future__ import annotations

import heapq
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as arrow
import pyarrow.compute as pc
import pyarrow.parquet as pq

from curll.errors import CurllError
from curll.generate.shard import ORDER, instance_id, shard_path_name
from curll.generate.tasks import items
from curll.instances import TYPES, made_on
from curll.schemas.generation import GenerationSchema, Provenance, SeedSchema, instance_schema
from curll.streaming import iter_table

_PROV = list(Provenance.to_schema().columns)


def shard_paths(shard_dir: str | Path, n: int) -> list[Path]:
    paths = [Path(shard_dir) / shard_path_name(i, n) for i in range(n)]
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        raise CurllError(f"{len(missing)} of {n} shards missing: {', '.join(missing[:5])}", file=shard_dir)
    return paths


def count_rows(paths: list[Path]) -> int:
    """Rows in all shards, from their footers."""
    total = 0
    for p in paths:
        try:
            total += pq.ParquetFile(p).metadata.num_rows
        except (OSError, ValueError) as exc:
            raise CurllError(f"not a readable parquet file ({exc})", file=p) from None
    return total


def _column(paths: list[Path], name: str) -> arrow.ChunkedArray:
    """One column of every shard (only that column is read)."""
    chunks = []
    for p in paths:
        try:
            chunks += [c.cast(arrow.string()) for c in pq.read_table(p, columns=[name]).column(0).chunks]
        except (OSError, ValueError, KeyError) as exc:
            raise CurllError(f"not a readable parquet file ({exc})", file=p) from None
    return arrow.chunked_array(chunks, type=arrow.string())


def check_unique(paths: list[Path]) -> None:
    """No request key twice over all shards (reads that column alone)."""
    counts = pc.value_counts(_column(paths, "request_key"))
    twice = counts.filter(pc.greater(counts.field("counts"), 1))
    if len(twice):
        key = str(twice.field("values")[0])
        raise CurllError(f"request {key[:16]}... appears twice in the shards", file=paths[0].parent)


def check_one_run(paths: list[Path]) -> None:
    """Every shard made by one run: one model over all shards, and one prompt version per task
    (a shard made again after a prompt or the model changed would mix two datasets); else a
    CurllError naming a shard of each."""
    seen: dict[tuple[str, str], dict[str, str]] = {}  # ("model", "") or ("prompt", task) -> value -> shard
    for p in paths:
        try:
            table = pq.read_table(p, columns=["task", "prompt_version", "model"])
        except (OSError, ValueError, KeyError) as exc:
            raise CurllError(f"not a readable parquet file ({exc})", file=p) from None
        distinct = table.group_by(table.column_names).aggregate([])  # one row a combination
        for task, version, model in zip(
            *(distinct.column(c).to_pylist() for c in table.column_names), strict=True
        ):
            seen.setdefault(("model", ""), {}).setdefault(str(model), p.name)
            seen.setdefault(("prompt", str(task)), {}).setdefault(str(version), p.name)
    for (what, task), values in sorted(seen.items()):
        if len(values) > 1:
            (a, first), (b, second) = sorted(values.items(), key=lambda kv: kv[1])[:2]
            said = f"model {a} in {first} but {b} in {second}" if what == "model" else (
                f"{task} prompt version {a} in {first} but {b} in {second}")  # fmt: skip
            raise CurllError(f"the shards are not of one run: {said}; make them again with one params",
                             file=paths[0].parent)  # fmt: skip


Key = tuple[str | int, ...]


def _sorted_stream(path: Path, index: int, batch_rows: int) -> Iterator[tuple[Key, int, pd.DataFrame, int]]:
    """(sort key, shard index, batch, row in batch) per row; a row out of order is an error."""
    last: Key | None = None
    for df in iter_table(path, GenerationSchema, batch_rows=batch_rows):
        for j, key in enumerate(zip(*(df[c].tolist() for c in ORDER), strict=True)):
            if last is not None and key < last:
                raise CurllError(
                    f"rows not in ({', '.join(ORDER)}) order (shards written by an older "
                    "generate: rerun it)", file=path, row=int(df.index[j]),
                )  # fmt: skip
            last = key
            yield key, index, df, j


def merged(shard_dir: str | Path, n: int, *, chunk_rows: int = 4096) -> Iterator[pd.DataFrame]:
    """See the module docstring."""
    paths = shard_paths(shard_dir, n)
    check_unique(paths)
    check_one_run(paths)
    streams = [_sorted_stream(p, i, chunk_rows) for i, p in enumerate(paths)]
    done = 0
    refs: list[tuple[pd.DataFrame, int]] = []
    for _, _, df, j in heapq.merge(*streams, key=lambda item: (item[0], item[1])):
        refs.append((df, j))
        if len(refs) == chunk_rows:
            yield _gather(refs, done)
            done += len(refs)
            refs = []
    if refs:
        yield _gather(refs, done)


def _gather(refs: list[tuple[pd.DataFrame, int]], start: int) -> pd.DataFrame:
    """The referenced rows, in order, as one frame indexed from ``start``."""
    by_batch: dict[int, tuple[pd.DataFrame, list[int], list[int]]] = {}
    for pos, (df, j) in enumerate(refs):
        entry = by_batch.setdefault(id(df), (df, [], []))
        entry[1].append(j)
        entry[2].append(pos)
    parts = [df.iloc[rows].set_axis(pos) for df, rows, pos in by_batch.values()]
    out = pd.concat(parts).sort_index()
    out.index = pd.RangeIndex(start, start + len(out))
    return out


def seed_fields(seeds_path: str | Path, shard_dir: str | Path, n: int) -> pd.DataFrame:
    """template, word and pos of every seed that the shards name, indexed by seed_id (the seeds
    table streamed: in full mode it holds millions of rows the shards may not use)."""
    wanted = pc.unique(_column(shard_paths(shard_dir, n), "seed_id"))
    cols = ["seed_id", "template", "word", "pos"]
    parts = [
        df[np.asarray(pc.is_in(arrow.array(df["seed_id"]), value_set=wanted))]
        for df in iter_table(seeds_path, SeedSchema, columns=cols)
    ]
    return pd.concat(parts).set_index("seed_id") if parts else pd.DataFrame(columns=cols).set_index("seed_id")


def split_instances(gens: pd.DataFrame, seeds: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Accepted generations as typed tables, one per instance type (its
    :func:`~curll.schemas.generation.instance_schema` columns); ``seeds``: template, word and
    pos indexed by seed_id (or a seeds table with a seed_id column). An item of a list answer is
    a row of its own, with the instance it was made on (``parent_id``) and its 1-based place."""
    seed_cols = seeds if "seed_id" not in seeds.columns else seeds.set_index("seed_id")
    ok = gens[gens["status"] == "ok"].join(seed_cols[["template", "word", "pos"]], on="seed_id")
    if ok["template"].isna().any():
        bad = ok.loc[ok["template"].isna(), "seed_id"].iloc[0]
        raise CurllError(f"generation for seed {bad} has no row in the seeds table", field="seed_id")
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in TYPES}
    for row in ok.to_dict("records"):
        base = {
            **{k: row[k] for k in _PROV},
            **{k: row[k] for k in ("seed_id", "indicator_id", "stage", "template", "word", "pos")},
        }
        task = TYPES[row["task"]]
        made = items(task.name, json.loads(row["output"]))
        if not task.pairs:
            out[task.name].append({"instance_id": instance_id(row["request_key"]), **base, **made[0]})
            continue
        for i, item in enumerate(made, start=1):
            out[task.name].append(
                {"instance_id": instance_id(row["request_key"], i), **base, task.link: row["parent_id"],
                 "type": task.name, "q_index": i, **item}
            )  # fmt: skip
    return {k: pd.DataFrame(v, columns=list(instance_schema(k).to_schema().columns)) for k, v in out.items()}


class Parents:
    """Every instance made on a passage names a passage of the shards: :meth:`add` each chunk's
    :func:`split_instances`, then :meth:`check` once all are in (passages and the questions on
    them may come in any order). Memory: the passages' ids and the distinct ids questions name."""

    def __init__(self, where: str | Path) -> None:
        self.where = where
        self.passages: set[str] = set()
        self.named: dict[str, tuple[str, str, str]] = {}  # passage id -> (type, instance, link column)

    def add(self, tables: dict[str, pd.DataFrame]) -> None:
        for name, kind in TYPES.items():
            df = tables[name]
            if made_on(name):
                self.passages.update(df["instance_id"].tolist())
            if kind.on:
                for parent, instance in zip(df[kind.link].tolist(), df["instance_id"].tolist(), strict=True):
                    self.named.setdefault(parent, (name, instance, kind.link))

    def check(self) -> None:
        """A CurllError naming an instance whose passage no shard holds (a shard's passages
        lost, or a shard of another run)."""
        lost = sorted(set(self.named) - self.passages)
        if lost:
            name, instance, link = self.named[lost[0]]
            raise CurllError(f"{name} instance {instance} is made on passage {lost[0]}, which no shard holds"
                             + (f" ({len(lost)} passages missing)" if len(lost) > 1 else ""),
                             file=self.where, field=link)  # fmt: skip


class MergeStats:
    """The stage's stats, added up a chunk at a time (same keys and order as ``count_by``)."""

    def __init__(self) -> None:
        self.requests: Counter[tuple[str, str]] = Counter()
        self.instances: Counter[str] = Counter({k: 0 for k in TYPES})
        self.per_stage: dict[str, Counter[int]] = {k: Counter() for k in TYPES}
        self.reasons: Counter[str] = Counter()
        self.tokens = {"prompt": 0, "completion": 0}

    def add(self, gens: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> None:
        self.requests.update(zip(gens["task"], gens["status"], strict=True))
        for k, v in tables.items():
            self.instances[k] += len(v)
            self.per_stage[k].update(v["stage"].tolist())
        self.reasons.update(r.split(":")[0] for r in gens.loc[gens["status"] == "reject", "reason"])
        self.tokens["prompt"] += int(gens["prompt_tokens"].sum())
        self.tokens["completion"] += int(gens["completion_tokens"].sum())

    def result(self) -> dict[str, Any]:
        return {
            "requests": {f"{t}/{s}": n for (t, s), n in sorted(self.requests.items())},
            "instances": dict(self.instances),
            "instances_per_stage": {
                k: {str(s): n for s, n in sorted(c.items())} for k, c in self.per_stage.items()
            },
            "reject_reasons": dict(self.reasons),
            "tokens": dict(self.tokens),
        }
