"""The fault table: the generate stage against a local server that fails a seeded share of
HTTP calls (429 with Retry-After, 500, 503, 400, answers past the timeout, truncated bodies,
content that is not JSON, JSON off the schema; tests/faults/mix.py), at several rates.

Per rate: requests, HTTP calls, engine retries, rejects by reason, wall time, the stage's
exit status, and what a rerun asks the server (it must be nothing). Nothing is asserted here;
tests/faults holds the checks at small sizes.

Usage: python -m bench.faults [--seeds 20] [--rates 0,0.1,0.5,1]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

import pandas as pd

from tests.faults.conftest import make_project, run_generate
from tests.faults.mix import FaultyServer

SHARD = "data/generate/shards/generations-0000-of-0001.parquet"


def one_rate(rate: float, n_seeds: int, root: Path) -> dict[str, object]:
    with FaultyServer(rate=rate, seed=7) as server:
        project = make_project(root / f"rate-{rate}", server.base_url, n_seeds=n_seeds)
        start = time.perf_counter()
        first = run_generate(project)
        wall = time.perf_counter() - start
        calls = len(server.requests)
        again = run_generate(project) if first.returncode == 0 else None
        rerun_calls = len(server.requests) - calls
    reasons: Counter[str] = Counter()
    if (project / SHARD).is_file():
        shard = pd.read_parquet(project / SHARD)
        reasons.update(r.split(":")[0] for r in shard.loc[shard["status"] == "reject", "reason"])
    faults = {k: v for k, v in sorted(server.mix.drawn.items()) if k != "ok"}
    return {
        "fault rate": f"{rate:.0%}",
        "requests": first.requests or "-",
        "ok": first.ok if first.returncode == 0 else "-",
        "HTTP calls": calls,
        "faults drawn": sum(faults.values()),
        "engine retries": first.retries if first.returncode == 0 else "-",
        "rejects by reason": ", ".join(f"{k} {v}" for k, v in reasons.most_common()) or "none",
        "wall s": round(wall, 1),
        "exit": first.returncode,
        "rerun: calls": rerun_calls if again is not None else "-",
        "rerun: exit": again.returncode if again is not None else "-",
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20, help="context seeds (and as many IR seeds)")
    ap.add_argument("--rates", default="0,0.1,0.5,1")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [one_rate(float(r), args.seeds, Path(tmp)) for r in args.rates.split(",")]
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
