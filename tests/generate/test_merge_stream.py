"""The streaming merge: the same tables as merging in memory, in bounded memory, with the
shards' order and uniqueness checked."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from curll.artifacts import write_table
from curll.errors import CurllError
from curll.generate.merge import MergeStats, merged, seed_fields, split_instances
from curll.generate.shard import ORDER, instance_id, shard_of, shard_path_name, sort_rows
from curll.schemas import GenerationSchema, SeedSchema
from curll.streaming import write_table_streams

COLUMNS = list(GenerationSchema.to_schema().columns)


def hx(text: str, n: int = 16) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def tables(n_seeds: int, text_words: int = 20) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seeds (with some the shards never use) and their generation rows, rejects included."""
    seeds: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for i in range(n_seeds + 5):
        kind = "context" if i % 2 == 0 else "ir"
        seeds.append({"seed_id": hx(f"s{i}"), "indicator_id": hx("ind"), "stage": i % 3, "age_group": "5-6",
                      "skill": "s", "subskill": "u", "goal": "g", "indicator": "i", "type": kind,
                      "template": f"form {i}", "word": f"word{i}", "pos": "Noun"})  # fmt: skip
    for i, seed in enumerate(seeds[:n_seeds]):
        base = {"model": "m", "backend": "openai", "sampling": "{}", "prompt_version": hx("v"),
                "prompt_hash": hx(f"h{i}"), "attempts": 1, "seed_id": seed["seed_id"],
                "indicator_id": seed["indicator_id"], "stage": seed["stage"], "prompt_tokens": 9,
                "completion_tokens": 7}  # fmt: skip
        key = hx(f"r{i}", 64)
        ok = i % 7 != 3
        text = " ".join(f"w{i}x{j}" for j in range(text_words))
        if seed["type"] == "ir":
            out = json.dumps({"instruction": f"Do {i}.", "response": text})
            verdict = {"status": "ok", "reason": ""} if ok else {"status": "reject", "reason": "empty: x"}
            rows.append({**base, "request_key": key, "task": "ir", "parent_id": "",
                         "output": out if ok else "", "raw": out, **verdict})  # fmt: skip
            continue
        out = json.dumps({"expanded_topic": "t", "generated_text": text})
        rows.append({**base, "request_key": key, "task": "context", "parent_id": "", "output": out,
                     "raw": out, "status": "ok", "reason": ""})  # fmt: skip
        for task, list_key, q, a in (("cqa", "question_answer_pairs", "question", "answer"),
                                     ("csqa", "skill_based_pairs", "instruction", "response")):  # fmt: skip
            qa = json.dumps({list_key: [{q: f"Q{k}?", a: f"A{k}."} for k in range(2)]})
            rows.append({**base, "request_key": hx(f"{task}{i}", 64), "task": task,
                         "parent_id": instance_id(key), "output": qa, "raw": qa, "status": "ok",
                         "reason": ""})  # fmt: skip
    return pd.DataFrame(seeds, columns=list(SeedSchema.to_schema().columns)), pd.DataFrame(
        rows, columns=COLUMNS
    )


def shards(gens: pd.DataFrame, n: int, where: Path) -> None:
    part = gens["seed_id"].map(lambda s: shard_of(s, n))
    for i in range(n):
        write_table(sort_rows(gens[part == i]), where / shard_path_name(i, n), GenerationSchema)


def test_streamed_chunks_equal_the_merge_in_memory(tmp_path):
    seeds, gens = tables(40)
    shards(gens, 3, tmp_path)
    write_table(seeds, tmp_path / "seeds.parquet", SeedSchema)
    chunks = list(merged(tmp_path, 3, chunk_rows=7))
    assert max(len(c) for c in chunks) == 7 and len(chunks) > 3
    streamed = pd.concat(chunks)
    whole = gens.sort_values(ORDER, kind="stable").reset_index(drop=True)  # the in-memory merge
    pd.testing.assert_frame_equal(streamed.reset_index(drop=True), whole)
    fields = seed_fields(tmp_path / "seeds.parquet", tmp_path, 3)
    assert len(fields) == 40  # the five seeds no shard names are left out
    stats = MergeStats()
    parts = []
    for chunk in chunks:
        parts.append(split_instances(chunk, fields))
        stats.add(chunk, parts[-1])
    expected = split_instances(whole, seeds)
    for name, table in expected.items():
        got = pd.concat([p[name] for p in parts], ignore_index=True)
        pd.testing.assert_frame_equal(got, table, check_dtype=False)
        assert stats.result()["instances"][name] == len(table)
    assert stats.result()["requests"]["ir/reject"] == int((whole["status"] == "reject").sum())


def test_an_unsorted_shard_and_a_repeated_request_are_named(tmp_path):
    _, gens = tables(12)
    write_table(gens.iloc[::-1].reset_index(drop=True), tmp_path / shard_path_name(0, 1), GenerationSchema)
    with pytest.raises(CurllError, match=r"not in \(task, stage, indicator_id, seed_id, parent_id\)") as err:
        list(merged(tmp_path, 1))
    assert err.value.row is not None and shard_path_name(0, 1) in str(err.value)
    shards(gens, 2, tmp_path)
    first = gens[gens["seed_id"].map(lambda s: shard_of(s, 2)) == 0].iloc[:3]
    write_table(sort_rows(first), tmp_path / shard_path_name(1, 2), GenerationSchema)  # shard 0's rows again
    with pytest.raises(CurllError, match="appears twice in the shards"):
        list(merged(tmp_path, 2))


def test_memory_holds_chunks_not_the_table(tmp_path):
    seeds, gens = tables(600, text_words=300)  # ~1,500 rows, ~5 MB of output text (twice: raw too)
    shards(gens, 2, tmp_path)
    write_table(seeds, tmp_path / "seeds.parquet", SeedSchema)
    text = int(gens["output"].str.len().sum() + gens["raw"].str.len().sum())
    del gens
    fields = seed_fields(tmp_path / "seeds.parquet", tmp_path, 2)
    outs = [(tmp_path / f"{k}.parquet", s) for k, s in (("g", GenerationSchema),)]
    tracemalloc.start()
    write_table_streams(outs, ([c] for c in merged(tmp_path, 2, chunk_rows=64)))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(fields) == 600 and pd.read_parquet(tmp_path / "g.parquet").shape[0] > 1000
    assert peak < text / 3, f"{peak / 1e6:.1f} MB traced for {text / 1e6:.1f} MB of text"
