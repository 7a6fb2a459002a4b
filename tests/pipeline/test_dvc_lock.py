"""The outputs committed to git (metrics, plots: ``cache: false``) are the ones ``dvc.lock``
records: a file committed from another run than the lock (a fresh clone's `dvc status` would
report a change nobody made) or left behind by a renamed stage (no stage updates it) fails."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from curll.yamlio import load_yaml

ROOT = Path(__file__).resolve().parents[2]


def committed_data_files() -> list[str]:
    try:
        listed = ["git", "ls-files", "data"]
        out = subprocess.run(listed, cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [f for f in out.stdout.split() if not f.endswith(".gitignore")]  # .gitignore: DVC's own


def test_every_committed_output_is_the_one_dvc_lock_records():
    lock = load_yaml(ROOT / "dvc.lock")["stages"]
    outs = {o["path"]: o["md5"] for stage in lock.values() for o in stage.get("outs", [])}
    stale, stray = [], []
    for name in committed_data_files():
        if name in outs:
            if hashlib.md5((ROOT / name).read_bytes()).hexdigest() != outs[name]:
                stale.append(name)
        elif not any(name.startswith(f"{path}/") for path in outs):  # a file of a folder output
            stray.append(name)
    assert stale == [], "these differ from dvc.lock: commit the files of the run that wrote the lock"
    assert stray == [], "no stage writes these: remove them"
