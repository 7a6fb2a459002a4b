"""Corrupt intermediates: a damaged parquet between stages is named (file, row, field), a
damaged cache database is detected, moved aside and rebuilt, never trusted."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from curll.llm.cache import RequestCache
from curll.llm.engine import Engine
from curll.llm.types import ChatRequest, Completion
from harness.commands import curll
from harness.mix import FaultyServer
from harness.project import make_project, run_generate

SHARD = "data/generate/shards/generations-0000-of-0001.parquet"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with FaultyServer(rate=0.0) as server:
        project = make_project(tmp_path_factory.mktemp("corrupt") / "p", server.base_url)
        assert run_generate(project).returncode == 0
    return project


def test_a_truncated_shard_is_named_and_nothing_is_written(generated, tmp_path):
    import shutil

    project = tmp_path / "p"
    shutil.copytree(generated, project)
    shard = project / SHARD
    os.truncate(shard, shard.stat().st_size // 2)
    proc = curll("generate_merge", "run", cwd=project, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{SHARD}: not a readable parquet file" in proc.stderr
    assert not (project / "data/generate/generations.parquet").exists()


def test_a_wrongly_typed_column_is_named_by_row_and_field(generated, tmp_path):
    import shutil

    project = tmp_path / "p"
    shutil.copytree(generated, project)
    shard = project / SHARD
    df = pd.read_parquet(shard)
    df["stage"] = df["stage"].astype(str).where(df.index != 3, "three")
    df.to_parquet(shard, index=False)
    proc = curll("generate_merge", "run", cwd=project, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{SHARD}, row 3, field 'stage'" in proc.stderr or f"{SHARD}, field 'stage'" in proc.stderr


class Counting:
    name, model = "transformers", "m"

    def __init__(self) -> None:
        self.asked = 0

    def complete(self, requests):
        self.asked += len(requests)
        return [Completion(text=f"answer {r.messages[0].content}") for r in requests]


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_corrupt_cache_is_moved_aside_and_rebuilt(tmp_path, damage):
    path = tmp_path / "llm.sqlite"
    requests = [ChatRequest.build([("user", f"q{i}" * 200)]) for i in range(300)]
    first = RequestCache(path)
    Engine(Counting(), first, progress=False).run(requests)
    first.close()  # (an open connection would keep serving pages from its WAL)
    if damage == "garbage":
        path.write_bytes(b"this is not a database" * 100)
    else:
        os.truncate(path, path.stat().st_size // 2)
    backend = Counting()
    with pytest.warns(UserWarning, match="not a sound cache database"):
        cache = RequestCache(path)
    results = Engine(backend, cache, progress=False).run(requests)
    assert backend.asked == 300 and all(r.status == "ok" for r in results)  # nothing trusted
    assert len(list(tmp_path.glob("llm.sqlite.corrupt-*"))) == 1  # kept for a post-mortem
    again = Counting()
    Engine(again, RequestCache(path), progress=False).run(requests)
    assert again.asked == 0  # the rebuilt cache serves the next run
