"""Two runs at once: a second ``dvc repro`` in the same repo is refused by DVC's lock and
changes nothing; two ``curll generate shard I`` processes each write a cache of their own,
which ``curll generate fold`` folds into the shared one without losing or doubling an answer."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from curll.yamlio import dump_yaml, load_yaml
from harness.commands import HANG, curll, dvc, env
from harness.mix import FaultyServer
from harness.project import make_project, under_dvc

pytestmark = pytest.mark.slow  # see docs/tests.md: over the default run's time budget


def test_a_second_repro_meanwhile_gets_dvcs_lock_message_and_changes_nothing(tmp_path):
    with FaultyServer(rate=0.0) as server:
        server.latency_s = 0.2  # the first repro runs for a few seconds
        project = make_project(tmp_path / "p", server.base_url, concurrency=1)
        under_dvc(project)
        first = subprocess.Popen([sys.executable, "-m", "dvc", "repro"], cwd=project, env=env(),
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
        deadline = time.monotonic() + HANG  # until the first is inside its stage
        while not server.requests and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        second = dvc("repro", cwd=project, check=False)
        out, _ = first.communicate(timeout=HANG)
    assert first.returncode == 0, out
    message = second.stdout + second.stderr  # DVC holds a read/write lock on the outputs in use
    assert second.returncode != 0 and "is busy, it is being blocked by" in message
    assert f"(PID {first.pid})" in message
    assert "Running stage" not in second.stdout
    assert "up to date" in dvc("status", cwd=project).stdout  # the first's results stand


def test_two_shard_processes_write_own_caches_that_fold_into_one_and_merge_as_one_process(tmp_path):
    with FaultyServer(rate=0.0) as server:
        single = make_project(tmp_path / "single", server.base_url, n_seeds=6)
        assert curll("generate", "run", cwd=single, check=False).returncode == 0
        curll("generate_merge", "run", cwd=single)
        split = tmp_path / "split"
        shutil.copytree(single / "prompts", split / "prompts")
        shutil.copytree(single / "data" / "seeds", split / "data" / "seeds")
        params = load_yaml(single / "params.yaml")
        params["generate"]["shards"] = 2
        dump_yaml(params, split / "params.yaml")
        asked_before = len(server.requests)
        procs = [subprocess.Popen([sys.executable, "-m", "pipeline.tools.cli", "generate", "shard", str(i)],
                                  cwd=split, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True) for i in range(2)]  # fmt: skip
        errors = [p.communicate(timeout=HANG)[1] for p in procs]
        assert [p.returncode for p in procs] == [0, 0], errors
        asked = len(server.requests) - asked_before
    curll("generate_merge", "run", cwd=split)
    for table in ("generations", "tables/context", "tables/cqa", "tables/csqa", "tables/ir"):
        a = pd.read_parquet(single / f"data/generate/{table}.parquet")
        b = pd.read_parquet(split / f"data/generate/{table}.parquet")
        pd.testing.assert_frame_equal(a, b)
    import sqlite3

    def stored(db_path: Path) -> int:
        with sqlite3.connect(db_path) as db:
            return int(db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    parts = sorted((split / ".curll/cache/shards").glob("llm-*-of-0002.sqlite"))
    assert len(parts) == 2 and not (split / ".curll/cache/llm.sqlite").exists()  # no shared writes
    assert sum(stored(p) for p in parts) == asked == 24
    curll("generate", "fold", cwd=split)
    assert not any(p.exists() for p in parts)
    assert stored(split / ".curll/cache/llm.sqlite") == 24  # every answer once: none lost, none twice
