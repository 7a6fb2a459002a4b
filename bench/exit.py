"""The ``curll`` command's end with torch and transformers loaded: :func:`pipeline.tools.cli.main`
left to Python's normal exit, against :func:`pipeline.tools.cli.entry` (the console script),
which ends without the final teardown.

Each child imports torch and transformers' ``AutoModelForCausalLM`` (what a stage on a model
loads), then runs ``curll params`` (prints the params as JSON, to a null device) through one
of the two functions; the measure is the child's whole wall time, so the difference between
the two is their exit. The two kinds of child run in turn, ``--repeats`` times each, so a
machine that slows down during the run weighs on both. Reports seconds (median and all), the
median difference. A child that fails or writes to stderr stops the benchmark.

Usage: python -m bench.exit [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = (
    "import sys, torch, transformers\n"
    "from transformers import AutoModelForCausalLM\n"
    "from pipeline.tools.cli import {function}\n"
    "sys.argv = ['curll', 'params']\n"
    "{function}()\n"
)
FUNCTIONS = {"normal exit (main)": "main", "curll's exit (entry)": "entry"}


def child_seconds(function: str) -> float:
    """Wall seconds of one child ending through ``function``; stops the benchmark if it fails."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD.format(function=function)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    if proc.returncode != 0 or proc.stderr.strip():
        raise SystemExit(f"bench.exit: {function}() ended {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    runs: dict[str, list[float]] = {name: [] for name in FUNCTIONS}
    for _ in range(args.repeats):
        for name, function in FUNCTIONS.items():
            runs[name].append(round(child_seconds(function), 2))
    median = {name: statistics.median(v) for name, v in runs.items()}
    normal, quick = (median[name] for name in FUNCTIONS)
    report = {
        "cpus": os.cpu_count(),
        "seconds": {name: {"median": median[name], "all": v} for name, v in runs.items()},
        "saved_seconds_median": round(normal - quick, 2),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
