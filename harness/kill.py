"""kill -9 trials: start a command in its own process group, wait for a progress mark, kill
the whole group (``dvc`` and the stage it runs), then restart. Shared by tests/faults and
bench/faults.py."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from harness.commands import HANG, env


def cached_rows(db: Path) -> int:
    """Rows in a request cache (0 while it does not exist yet)."""
    if not db.exists():
        return 0
    try:
        with closing(sqlite3.connect(db, timeout=1)) as con:  # a connection's `with` only commits
            return int(con.execute("SELECT COUNT(*) FROM completions").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def stored_answers(project: Path) -> int:
    """Answers a project's request caches hold: the shared one and the generate shards' own
    (``.curll/cache/shards/``, folded into the shared one when the stage ends)."""
    return sum(cached_rows(db) for db in (project / ".curll" / "cache").rglob("*.sqlite"))


def kill_when(args: list[str], cwd: Path, ready: Callable[[], bool]) -> bool:
    """Run ``args`` (``python -m ...``) and SIGKILL its process group once ``ready()`` holds;
    False when it finished before that (nothing was killed)."""
    proc = subprocess.Popen([sys.executable, "-m", *args], cwd=cwd, env=env(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + HANG  # waits for progress, however slow the machine
    while not ready() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if proc.poll() is not None:
        return False
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return True


def leftovers(root: Path) -> list[str]:
    """Temporary files an atomic write would leave if it were not atomic."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.tmp"))
