"""generate on Ray (``generate.runner: ray``, a local Ray cluster of this machine): the shard
files and the merged tables are byte-identical to one process's, every answer is folded into
the shared cache once, and a rerun on one machine (the local runner) asks the server nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from curll.yamlio import dump_yaml, load_yaml
from harness.commands import curll
from harness.mix import FaultyServer
from harness.project import make_project

pytestmark = pytest.mark.slow  # see docs/tests.md: over the default run's time budget

pytest.importorskip("ray")

#: what generate_merge writes: the generations, and a table per instance type
TABLES = ("generations.parquet", "tables/context.parquet", "tables/ir.parquet", "tables/cqa.parquet",
          "tables/csqa.parquet")  # fmt: skip


def configure(project: Path, **generate: object) -> None:
    params = load_yaml(project / "params.yaml")
    params["generate"].update(generate)
    dump_yaml(params, project / "params.yaml")


def test_ray_shards_are_byte_identical_to_one_process_and_a_rerun_asks_nothing(tmp_path):
    with FaultyServer(rate=0.0) as server:
        local = make_project(tmp_path / "local", server.base_url, n_seeds=6)
        configure(local, shards=2)
        curll("generate", "run", cwd=local)
        on_ray = make_project(tmp_path / "ray", server.base_url, n_seeds=6)
        configure(on_ray, shards=2, runner="ray")
        before = len(server.requests)
        run = curll("generate", "run", cwd=on_ray)
        asked = len(server.requests) - before
        assert "folded 2 shard caches" in run.stdout + run.stderr
        made = {p.name: p.read_bytes() for p in (on_ray / "data/generate/shards").iterdir()}
        configure(on_ray, shards=2, runner="local")  # a rerun on one machine never pays twice
        rerun = curll("generate", "run", cwd=on_ray)
        assert len(server.requests) == before + asked  # every answer came from the folded cache
        assert "0 sent to the model" in rerun.stdout + rerun.stderr
    shards = sorted(p.name for p in (local / "data/generate/shards").iterdir())
    assert shards == ["generations-0000-of-0002.parquet", "generations-0001-of-0002.parquet"]
    for name in shards:
        assert (local / "data/generate/shards" / name).read_bytes() == made[name], name  # Ray's
        assert (on_ray / "data/generate/shards" / name).read_bytes() == made[name], name  # the rerun's
    for project in (local, on_ray):
        curll("generate_merge", "run", cwd=project)
    for table in TABLES:
        a, b = (p / "data/generate" / table for p in (local, on_ray))
        assert a.read_bytes() == b.read_bytes(), table
    with sqlite3.connect(on_ray / ".curll/cache/llm.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM completions").fetchone()[0] == asked == 24
    assert not list((on_ray / ".curll/cache/shards").glob("*.sqlite"))
