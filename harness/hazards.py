"""Four hazards for ``python -m bench.faults``, each a row of one table: a kill -9 in the middle
of a large batch, a server that trickles its answers, a fold and a second run beside a working
shard job, a full disk under the request cache. Columns: HTTP calls, answers stored, answers
lost (bought but not in any cache), calls asked twice, exit statuses, temp files left, wall
time. Nothing is asserted here; the checks
are tests/faults/test_concurrent_fold.py, test_cache_disk.py and the deadline tests."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import deque
from pathlib import Path

from curll.yamlio import dump_yaml, load_yaml
from harness.commands import HANG, curll, env
from harness.kill import cached_rows, kill_when, leftovers, stored_answers
from harness.mix import FaultyServer
from harness.project import make_project, run_generate

PART = ".curll/cache/shards/llm-0000-of-0001.sqlite"


def kill_mid_batch(root: Path, n_seeds: int, at: int = 20) -> dict[str, object]:
    """``kill -9`` of `curll generate run` once ``at`` answers of a 64-request batch were served,
    then a rerun: answers lost are the calls beyond an uninterrupted run's."""
    with FaultyServer(rate=0.0) as server:
        server.latency_s = 0.05
        project = make_project(root / "kill", server.base_url, n_seeds=n_seeds, batch_size=64,
                               concurrency=2, timeout_s=600)  # fmt: skip
        start = time.perf_counter()
        killed = kill_when(
            ["pipeline.tools.cli", "generate", "run"], project, lambda: len(server.requests) >= at
        )
        kept, asked = stored_answers(project), len(server.requests)
        rerun = run_generate(project)
        wall = time.perf_counter() - start
        calls = len(server.requests)
    total = calls - (asked - kept)  # what an uninterrupted run asks: every answer once
    return {"hazard": f"kill -9 after {at} answers of a 64-request batch{'' if killed else ' (ended first)'}",
            "HTTP calls": calls, "answers stored": kept, "answers lost": asked - kept,
            "asked twice": calls - total, "exit": rerun.returncode, "temp files": len(leftovers(project)),
            "wall s": round(wall, 1)}  # fmt: skip


def trickle(root: Path, n_seeds: int, trickled: int = 3) -> dict[str, object]:
    """``trickled`` answers sent a byte every 0.3 s, with ``timeout_s: 1`` (a deadline)."""
    with FaultyServer(rate=0.0) as server:
        server.script = deque(["trickle"] * trickled)
        project = make_project(root / "trickle", server.base_url, n_seeds=n_seeds, timeout_s=1.0)
        start = time.perf_counter()
        run = run_generate(project)
        wall = time.perf_counter() - start
        calls = len(server.requests)
    lost = calls - cached_rows(project / ".curll/cache/llm.sqlite") - trickled
    return {"hazard": f"{trickled} answers trickled (a byte / 0.3 s), timeout_s 1", "HTTP calls": calls,
            "answers stored": calls - trickled - lost, "answers lost": lost, "asked twice": 0,
            "exit": run.returncode, "temp files": len(leftovers(project)),
            "wall s": round(wall, 1)}  # fmt: skip


def fold_beside_a_job(root: Path, n_seeds: int) -> dict[str, object]:
    """`curll generate fold` and a second `curll generate run` while `generate shard 0` works."""
    with FaultyServer(rate=0.0) as server:
        server.latency_s = 0.1
        project = make_project(root / "fold", server.base_url, n_seeds=n_seeds, concurrency=1,
                               batch_size=2, timeout_s=600)  # fmt: skip
        start = time.perf_counter()
        job = subprocess.Popen([sys.executable, "-m", "pipeline.tools.cli", "generate", "shard", "0"],
                               cwd=project, env=env(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + HANG
        while job.poll() is None and cached_rows(project / PART) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        server.gate.clear()  # the job waits on its next answer while the others try
        fold = curll("generate", "fold", cwd=project, check=False)
        asked = len(server.requests)
        second = subprocess.Popen([sys.executable, "-m", "pipeline.tools.cli", "generate", "run"],
                                  cwd=project, env=env(), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)  # fmt: skip
        while second.poll() is None and len(server.requests) == asked:
            time.sleep(0.02)
        twice = len(server.requests) - asked
        server.gate.set()
        second.wait(timeout=HANG)
        job.wait(timeout=HANG)
        wall = time.perf_counter() - start
        calls = len(server.requests)
    curll("generate", "fold", cwd=project, check=False)
    kept = cached_rows(project / ".curll/cache/llm.sqlite")
    return {"hazard": "fold + second run beside a shard job", "HTTP calls": calls, "answers stored": kept,
            "answers lost": calls - kept, "asked twice": twice,
            "exit": f"job {job.returncode}, fold {fold.returncode}, run {second.returncode}",
            "temp files": len(leftovers(project)), "wall s": round(wall, 1)}  # fmt: skip


def full_cache_disk(root: Path, n_seeds: int) -> dict[str, object]:
    """The generate stage with its request cache on a full 1 MiB tmpfs (needs root)."""
    disk = root / "disk"
    disk.mkdir(parents=True)
    row: dict[str, object] = {"hazard": "request cache on a full disk"}
    mount = ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        return {**row, "exit": "skipped: cannot mount a tmpfs (needs root)"}
    try:
        with FaultyServer(rate=0.0) as server:
            project = make_project(root / "disk-project", server.base_url, n_seeds=n_seeds)
            params = load_yaml(project / "params.yaml")
            params["llm"]["cache"] = str(disk / "llm.sqlite")
            dump_yaml(params, project / "params.yaml")
            if run_generate(project).returncode != 0:
                return {**row, "exit": "skipped: the first run did not fit the disk"}
            before = cached_rows(disk / "llm.sqlite")
            params["generate"]["pairs"]["cqa"] = 3  # new requests
            dump_yaml(params, project / "params.yaml")
            calls = len(server.requests)
            subprocess.run(["dd", "if=/dev/zero", f"of={disk / 'filler'}", "bs=4k", "count=1000"],
                           capture_output=True)  # fmt: skip
            start = time.perf_counter()
            run = run_generate(project)
            wall = time.perf_counter() - start
            calls = len(server.requests) - calls
        (disk / "filler").unlink()
        said = "No space left on device" in run.output and "Traceback" not in run.output
        return {**row, "HTTP calls": calls, "answers stored": cached_rows(disk / "llm.sqlite"),
                "answers lost": before - cached_rows(disk / "llm.sqlite"), "asked twice": 0,
                "exit": f"{run.returncode}{' (names the cache)' if said else ''}",
                "temp files": len(leftovers(project)) + len(list(disk.rglob("*.corrupt-*"))),
                "wall s": round(wall, 1)}  # fmt: skip
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)
