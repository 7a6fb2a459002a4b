"""Running the real ``curll`` and ``dvc`` commands from tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

BIN = str(Path(sys.executable).parent)


def env() -> dict[str, str]:
    """The test's environment with this interpreter's scripts (curll, dvc) first on PATH."""
    out = dict(os.environ)
    out["PATH"] = BIN + os.pathsep + out.get("PATH", "")
    out.update(
        DVC_NO_ANALYTICS="1",
        GIT_AUTHOR_NAME="curll-tests",
        GIT_AUTHOR_EMAIL="tests@curll.invalid",
        GIT_COMMITTER_NAME="curll-tests",
        GIT_COMMITTER_EMAIL="tests@curll.invalid",
    )
    return out


#: a guard against a hung child, not a speed limit: the slowest command here is the smoke test's
#: whole-pipeline ``dvc repro`` (minutes, more on a loaded machine); an hour trips only on a real hang
HANG = 3600


def run(args: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, env=env(), text=True, capture_output=True, timeout=HANG)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def curll(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "pipeline.tools.cli", *args], cwd=cwd, check=check)


def dvc(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "dvc", *args], cwd=cwd, check=check)


def on_random_model(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` (a loaded params.yaml) with every LLM stage, the judges included, on the tiny
    random model: the suite never loads SmolLM2 (the default of ``make run``)."""
    params["llm"]["use"] = "embedded"
    params["split"]["rater"] = "embedded"
    params["evaluate"]["judges"] = ["embedded"]
    return params
