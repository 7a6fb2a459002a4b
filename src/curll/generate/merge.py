"""Merge the generate stage's shards and split them into typed instance tables.

Contract of :func:`merge_shards`: reads ``generations-<i>-of-<n>.parquet`` for every
i < n from ``shard_dir`` (a missing shard is an error naming it), checks that no request
appears twice, and returns the generations table sorted by (task, seed_id, parent_id)
plus the accepted instances: contexts, ir, cqa and csqa (one QA pair per row), each
joined with its seed's template and word. Rejected requests stay only in generations.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from curll.artifacts import count_by, read_table, records
from curll.errors import CurllError
from curll.generate.shard import instance_id, shard_path_name
from curll.generate.tasks import QA_KEYS
from curll.schemas.generation import (
    ContextSchema,
    GenerationSchema,
    InstructionSchema,
    Provenance,
    QAPairSchema,
)

_PROV = list(Provenance.to_schema().columns)


def read_shards(shard_dir: str | Path, n: int) -> pd.DataFrame:
    paths = [Path(shard_dir) / shard_path_name(i, n) for i in range(n)]
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        raise CurllError(f"{len(missing)} of {n} shards missing: {', '.join(missing[:5])}", file=shard_dir)
    df = pd.concat([read_table(p, GenerationSchema) for p in paths], ignore_index=True)
    dup = df["request_key"].duplicated()
    if dup.any():
        raise CurllError(
            f"request {df.loc[dup, 'request_key'].iloc[0][:16]}... appears in two shards", file=shard_dir
        )
    return df.sort_values(["task", "seed_id", "parent_id"], kind="stable").reset_index(drop=True)


def split_instances(gens: pd.DataFrame, seeds: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Accepted generations as typed tables: {"contexts", "ir", "cqa", "csqa"}."""
    seed_cols = seeds.set_index("seed_id")[["template", "word", "pos"]]
    ok = gens[gens["status"] == "ok"].join(seed_cols, on="seed_id")
    if ok["template"].isna().any():
        bad = ok.loc[ok["template"].isna(), "seed_id"].iloc[0]
        raise CurllError(f"generation for seed {bad} has no row in the seeds table", field="seed_id")
    out: dict[str, list[dict[str, Any]]] = {"contexts": [], "ir": [], "cqa": [], "csqa": []}
    for row in records(ok):
        base = {
            **{k: row[k] for k in _PROV},
            "seed_id": row["seed_id"],
            "indicator_id": row["indicator_id"],
            "stage": row["stage"],
            "template": row["template"],
            "word": row["word"],
            "pos": row["pos"],
        }
        parsed = json.loads(row["output"])
        task = row["task"]
        if task == "context":
            text = {"expanded_topic": parsed["expanded_topic"], "text": parsed["generated_text"]}
            out["contexts"].append({"instance_id": instance_id(row["request_key"]), **base, **text})
        elif task == "ir":
            pair = {"instruction": parsed["instruction"], "response": parsed["response"]}
            out["ir"].append({"instance_id": instance_id(row["request_key"]), **base, **pair})
        else:
            list_key, q, a = QA_KEYS[task]
            for i, item in enumerate(parsed[list_key], start=1):
                pair_id = instance_id(row["request_key"], i)
                out[task].append(
                    {"instance_id": pair_id, **base, "context_id": row["parent_id"],
                     "type": task, "q_index": i, "question": item[q], "answer": item[a]}
                )  # fmt: skip
    schemas = {"contexts": ContextSchema, "ir": InstructionSchema, "cqa": QAPairSchema, "csqa": QAPairSchema}
    return {k: pd.DataFrame(v, columns=list(schemas[k].to_schema().columns)) for k, v in out.items()}


def generation_stats(gens: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> dict[str, Any]:
    return {
        "requests": count_by(gens, ["task", "status"]),
        "instances": {k: len(v) for k, v in tables.items()},
        "instances_per_stage": {k: count_by(v, ["stage"]) for k, v in tables.items()},
        "reject_reasons": dict(
            Counter(r.split(":")[0] for r in gens.loc[gens["status"] == "reject", "reason"])
        ),
        "tokens": {
            "prompt": int(gens["prompt_tokens"].sum()),
            "completion": int(gens["completion_tokens"].sum()),
        },
    }
