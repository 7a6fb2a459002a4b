"""mypy as ``make lint`` runs it (``--num-workers auto``) against mypy in one process, cold and warm.

Cold is a new, empty cache folder, as in a fresh clone; warm is the run just after, on the cache
the cold run left. Each setting runs ``--repeats`` times in turn (``one``, ``auto``, ``one``,
``auto``...), so a machine that slows down during the run weighs on both. Also checks that both
settings report the same diagnostics on the project as it is. Reports seconds (best and all),
CPU-seconds of the cold runs (children's user + system) and the cold ratio one / auto.

Usage: python -m bench.lint [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {"one": [], "auto": ["--num-workers", "auto"]}


def mypy(extra: list[str], cache: Path) -> tuple[float, float, str]:
    """(wall seconds, CPU-seconds, stdout) of one mypy run on the project with ``cache``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "mypy", "--cache-dir", str(cache), *extra]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):  # 1: type errors found, still a whole check
        raise SystemExit(f"bench.lint: mypy {' '.join(extra)} failed: {proc.stderr.strip()[-500:]}")
    return wall, cpu, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    runs: dict[str, dict[str, list[float]]] = {k: {"cold": [], "cold_cpu": [], "warm": []} for k in SETTINGS}
    outputs: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-lint-") as tmp:
        for i in range(args.repeats):
            for name, extra in SETTINGS.items():
                cache = Path(tmp) / f"{name}-{i}"
                wall, cpu, out = mypy(extra, cache)
                runs[name]["cold"].append(round(wall, 1))
                runs[name]["cold_cpu"].append(round(cpu, 1))
                runs[name]["warm"].append(round(mypy(extra, cache)[0], 1))
                lines = {line for line in out.splitlines() if ": error:" in line or ": note:" in line}
                if outputs.setdefault(name, lines) != lines:
                    raise SystemExit(f"bench.lint: mypy {name} reported different diagnostics on run {i + 1}")
    report = {
        "cpus": os.cpu_count(),
        "seconds": {k: {kind: {"best": min(v), "all": v} for kind, v in r.items()} for k, r in runs.items()},
        "cold_ratio_one_over_auto": round(min(runs["one"]["cold"]) / min(runs["auto"]["cold"]), 2),
        "same_diagnostics": outputs["one"] == outputs["auto"],
        "diagnostics": len(outputs["one"]),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
