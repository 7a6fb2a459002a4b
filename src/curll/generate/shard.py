"""One shard of the generate stage: passages and IR from seeds, then CQA and CSQA on passages.

Contract of :func:`generate_shard`:
- shard i of n takes the seeds with ``int(seed_id, 16) % n == i`` (stable under any change
  to other seeds), in seed-table order;
- step 1 asks, for every seeded instance type (:mod:`curll.instances`: context, ir), its task
  for the seeds of that type;
- step 2 asks, for every accepted instance of a type that others are made on (a passage),
  one request of each such type (CQA, CSQA: ``pairs[type]`` pairs), given the passage's text
  under its type's name; a rejected passage gets no QA requests;
- every answer passes :func:`curll.generate.tasks.engine_check` inside the engine (no empty
  field, no copy of the prompt's own wording, and with ``checks`` none of verify's content
  checks that a new attempt can fix: loops, short prompts, other languages), else it is asked
  again, then rejected;
- returns one :class:`~curll.schemas.GenerationSchema` row per request, rejects included,
  sorted by (task, stage, indicator_id, seed_id, parent_id) (:func:`sort_rows`: the merge
  reads shards as sorted streams, and every table after it is grouped by stage), with
  ``parent_id`` linking QA rows to their passage; a QA row's ``request_key`` is its
  request's key combined with ``parent_id`` (:func:`row_key`), so two identical passages
  share one answer from the engine but make rows (and instances) of their own. The engine's
  cache makes a rerun (or a restart after ``kill -9``) ask only what it has not stored yet.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from curll.artifacts import empty_table, records
from curll.config.verify import ContentChecks
from curll.errors import CurllError
from curll.generate.tasks import check, engine_check, quotable_text
from curll.instances import TYPES, made_on, seeded
from curll.llm.engine import Engine
from curll.llm.tasks import Answer, Task, ask, prompt_hash, provenance
from curll.llm.types import canonical_json
from curll.schemas.generation import GenerationSchema, SeedSchema
from curll.streaming import check_unique, iter_table
from curll.yields import measure, unit_frame


def shard_of(seed_id: str, n: int) -> int:
    return int(seed_id, 16) % n


def shard_seeds(path: str | Path, shard: int, n: int) -> pd.DataFrame:
    """The seeds of shard ``shard`` of ``n``, in seed-table order, read a batch at a time (in full
    mode the table holds millions of seeds, of which a shard needs 1/n); seed ids are checked
    unique over the whole table, from that column alone. An empty table is an error."""
    if check_unique(path, "seed_id") == 0:
        raise CurllError("no seeds (an empty table): nothing to generate", file=path)
    parts = [df[[shard_of(s, n) == shard for s in df["seed_id"]]] for df in iter_table(path, SeedSchema)]
    mine = pd.concat(parts) if parts else empty_table(SeedSchema)
    return mine.reset_index(drop=True)


def instance_id(request_key: str, index: int = 0) -> str:
    """16 hex chars: the instance made by a request (``index`` numbers the pairs of a QA list)."""
    return hashlib.sha256(f"{request_key}:{index}".encode()).hexdigest()[:16]


def row_key(request_key: str, parent_id: str) -> str:
    """A row's key: the request's own key, or for a row made on a passage (``parent_id``) a
    64-hex hash of both."""
    if not parent_id:
        return request_key
    return hashlib.sha256(f"{request_key}:{parent_id}".encode()).hexdigest()


#: the order of a shard's rows, and of the merged table (:mod:`curll.generate.merge`)
ORDER = ["task", "stage", "indicator_id", "seed_id", "parent_id"]


def sort_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows in merge order: a shard is written sorted, so shards merge as sorted streams."""
    return df.sort_values(ORDER, kind="stable").reset_index(drop=True)


def shard_path_name(i: int, n: int) -> str:
    return f"generations-{i:04d}-of-{n:04d}.parquet"


def stale_shards(folder: Path, n: int) -> list[Path]:
    """The shard files in ``folder`` that are not one of ``n`` shards (an earlier shard count's)."""
    mine = {shard_path_name(i, n) for i in range(n)}
    return sorted(p for p in folder.glob("generations-*-of-*.parquet") if p.name not in mine)


def generate_shard(
    seeds: pd.DataFrame,
    engine: Engine,
    tasks: Mapping[str, Task],
    *,
    shard: int,
    n: int,
    pairs: Mapping[str, int],
    checks: ContentChecks | None = None,
) -> pd.DataFrame:
    mine = records(seeds.loc[[shard_of(s, n) == shard for s in seeds["seed_id"]]])
    rows: list[dict[str, Any]] = []
    bases: dict[str, list[tuple[dict[str, Any], str, str]]] = {}  # type -> (seed, instance id, text)
    for type_ in seeded():
        batch = [s for s in mine if s["type"] == type_]
        engine.desc = f"shard {shard}/{n} {type_}"
        checked = _checked(tasks[type_], type_, batch, checks)
        text = TYPES[type_].key_of(TYPES[type_].reply)
        for seed, answer in zip(batch, ask(engine, checked, batch), strict=True):
            row = _row(type_, seed, "", answer)
            rows.append(row)
            if made_on(type_) and row["status"] == "ok":
                bases.setdefault(type_, []).append(
                    (seed, instance_id(answer.result.key), answer.result.parsed[text])
                )
    for base, kept in bases.items():
        for qa in made_on(base):
            fields = [{**seed, base: text, "n_pairs": pairs[qa]} for seed, _, text in kept]
            engine.desc = f"shard {shard}/{n} {qa}"
            checked = _checked(tasks[qa], qa, fields, checks)
            for (seed, ctx_id, _), answer in zip(kept, ask(engine, checked, fields), strict=True):
                rows.append(_row(qa, seed, ctx_id, answer))
    return sort_rows(pd.DataFrame(rows, columns=list(GenerationSchema.to_schema().columns)))


def _checked(task: Task, name: str, rows: list[dict[str, Any]], checks: ContentChecks | None) -> Task:
    """``task`` with the engine check of :func:`curll.generate.tasks.engine_check`, told which
    text each of these rows' requests may quote, and verify's content thresholds."""
    quotable = {prompt_hash(task.request(r)): quotable_text(r) for r in rows}
    return replace(task, check=engine_check(name, quotable, checks))


def _row(task: str, seed: dict[str, Any], parent_id: str, answer: Answer) -> dict[str, Any]:
    res = answer.result
    status, reason, output = res.status, res.reason, ""
    if res.status == "ok":
        keep, why = check(task, res.parsed)
        if keep:
            output = canonical_json(res.parsed)
        else:
            status, reason = "reject", why
    prov = provenance(answer, status=status, reason=reason)
    return {
        **prov,
        "request_key": row_key(prov["request_key"], parent_id),
        "task": task,
        "seed_id": seed["seed_id"],
        "parent_id": parent_id,
        "indicator_id": seed["indicator_id"],
        "stage": seed["stage"],
        "output": output,
        "prompt_tokens": res.prompt_tokens,
        "completion_tokens": res.completion_tokens,
    }


def expected_groups(seeds: pd.DataFrame) -> set[tuple[int, str]]:
    """The (stage, task) groups a shard's seeds ask for: a seed's own type, and the types made
    on it (a passage seed's passage and its QA sets, an IR seed's pair; a group with no answer
    at all then reports a yield of 0)."""
    return {(int(s), t) for s, kind in zip(seeds["stage"], seeds["type"], strict=True)
            for t in (kind, *made_on(kind))}  # fmt: skip


def shard_yields(seeds: pd.DataFrame, rows: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Yields per task and stage of one shard's generation rows (see :mod:`curll.yields`)."""
    units = unit_frame(rows["stage"], rows["task"], rows["status"] == "ok", rows["reason"])
    return measure(units, expected_groups(seeds))
