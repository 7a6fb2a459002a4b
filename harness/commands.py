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


#: a guard against a hung child, not a speed limit: the slowest command here (the smoke test's
#: whole-pipeline ``dvc repro``) takes about 2 minutes on an idle 2-core machine and was seen at
#: 5x that on a loaded one; an hour trips only on a real hang
HANG = 3600


def run(args: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, env=env(), text=True, capture_output=True, timeout=HANG)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def curll(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "pipeline.tools.cli", *args], cwd=cwd, check=check)


def curll_here(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``curll ARGS`` in this process: :func:`pipeline.tools.cli.main`, which the console script
    calls, run in ``cwd`` with its stdout and stderr captured; its status is the returncode. For
    many checks of what a command prints on bad input, without a new process (about a second)
    each; :func:`curll` is the command as a user runs it."""
    import contextlib
    import io
    import warnings

    from pipeline.tools.cli import main

    out, err = io.StringIO(), io.StringIO()
    before = (Path.cwd(), sys.argv)
    status: int = 0
    try:
        os.chdir(cwd)
        sys.argv = ["curll", *args]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("default")  # printed on stderr, as the command's would be
            warnings.showwarning = _warning_to(err)
            try:
                main()
            except SystemExit as stop:  # as Python ends: None is 0, an int itself, else 1
                status = 0 if stop.code is None else stop.code if isinstance(stop.code, int) else 1
    finally:
        os.chdir(before[0])
        sys.argv = before[1]
    return subprocess.CompletedProcess(["curll", *args], status, out.getvalue(), err.getvalue())


def _warning_to(stream: Any) -> Any:
    """A ``warnings.showwarning`` that writes each warning to ``stream``, as Python prints it."""
    import warnings

    def show(
        message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None
    ) -> None:
        stream.write(warnings.formatwarning(message, category, filename, lineno, line))

    return show


def dvc(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "dvc", *args], cwd=cwd, check=check)


def on_random_model(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` (a loaded params.yaml) with every LLM stage, the judges included, on the tiny
    random model: the suite never loads SmolLM2 (the default of ``make run``)."""
    params["llm"]["use"] = "embedded"
    params["split"]["rater"] = "embedded"
    params["evaluate"]["judges"] = ["embedded"]
    return params
