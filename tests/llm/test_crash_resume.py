"""kill -9 a running engine, restart it: same output as an uninterrupted run, nothing asked twice."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from harness.commands import HANG, env
from harness.server import FakeChatServer

ROOT = Path(__file__).resolve().parents[2]
N = 40


def start(base_url: str, cache: Path, out: Path) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "tests.llm.crash_worker", base_url, str(cache), str(out), str(N)]
    return subprocess.Popen(args, cwd=ROOT, env=env())


def cached_rows(cache: Path) -> int:
    try:
        with sqlite3.connect(cache) as db:
            return int(db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_sigkill_mid_run_then_restart_equals_uninterrupted(tmp_path):
    with FakeChatServer() as ref_server:
        proc = start(ref_server.base_url, tmp_path / "ref.db", tmp_path / "ref.jsonl")
        assert proc.wait(timeout=HANG) == 0

    with FakeChatServer(latency_s=0.05) as server:
        proc = start(server.base_url, tmp_path / "run.db", tmp_path / "run.jsonl")
        deadline = time.monotonic() + HANG  # waits for progress, however slow the machine
        while cached_rows(tmp_path / "run.db") < 12 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=HANG)
        at_kill = cached_rows(tmp_path / "run.db")
        assert 12 <= at_kill < N, "the kill must land mid-run"
        asked_before = len(server.requests)

        proc = start(server.base_url, tmp_path / "run.db", tmp_path / "run.jsonl")
        assert proc.wait(timeout=HANG) == 0
        asked_after = len(server.requests) - asked_before

    assert (tmp_path / "run.jsonl").read_text() == (tmp_path / "ref.jsonl").read_text()
    assert asked_after == N - at_kill  # everything stored before the kill was reused
    assert asked_before + asked_after <= N + 4  # at most the one batch in flight was asked again
