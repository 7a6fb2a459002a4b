"""The generate stage on Ray with 2 workers against one process, on this machine.

A local OpenAI-compatible server answers every request after ``--latency`` seconds (a stand-in
for a model's time), one request at a time per shard process (``concurrency: 1``: one model
per worker). The same project runs ``curll generate run`` with ``generate.shards: 2`` on the
local runner (the shards in turn) and on Ray (one task a shard, Ray started by the stage), each
from an empty cache. Reports wall times, their ratio, the requests each run sent, and whether
the shard files and the merged tables are byte-identical.

Usage: python -m bench.generate_ray [--seeds 40] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from curll.yamlio import dump_yaml, load_yaml
from harness.commands import curll
from harness.mix import FaultyServer
from harness.project import make_project

#: what generate_merge writes: the generations, and a table per instance type
TABLES = ("generations", "tables/context", "tables/ir", "tables/cqa", "tables/csqa")


def one(server: FaultyServer, root: Path, runner: str, seeds: int) -> tuple[Path, float, int]:
    project = make_project(root / runner, server.base_url, n_seeds=seeds, concurrency=1, timeout_s=30)
    params = load_yaml(project / "params.yaml")
    params["generate"].update(shards=2, runner=runner)
    dump_yaml(params, project / "params.yaml")
    before = len(server.requests)
    start = time.perf_counter()
    curll("generate", "run", cwd=project)
    wall = time.perf_counter() - start
    asked = len(server.requests) - before
    curll("generate_merge", "run", cwd=project)
    return project, wall, asked


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=40, help="context seeds (and as many IR seeds)")
    ap.add_argument("--latency", type=float, default=0.05, help="seconds per answer")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FaultyServer(rate=0.0) as server:
        server.latency_s = args.latency  # one server: the model name on every row holds its URL
        local, t_local, n_local = one(server, Path(tmp), "local", args.seeds)
        ray, t_ray, n_ray = one(server, Path(tmp), "ray", args.seeds)
        files = [f"shards/{p.name}" for p in sorted((local / "data/generate/shards").iterdir())]
        files += [f"{t}.parquet" for t in TABLES]
        same = all(
            (local / "data/generate" / f).read_bytes() == (ray / "data/generate" / f).read_bytes()
            for f in files
        )
    print(json.dumps({
        "requests": {"local": n_local, "ray": n_ray},
        "wall_s": {"local, 2 shards in turn": round(t_local, 1), "ray, 2 workers": round(t_ray, 1)},
        "ray / local": round(t_ray / t_local, 3),
        "byte_identical": {"files": len(files), "all": same},
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
