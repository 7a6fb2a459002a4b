"""The fault table: the generate stage against a local server that fails a seeded share of
HTTP calls (429 with Retry-After, 500, 503, 400, answers past the timeout, truncated bodies,
content that is not JSON, JSON off the schema; harness/mix.py), at several rates.

Per rate: requests, HTTP calls, engine retries, rejects by reason, wall time, the stage's
exit status, and what a rerun asks the server (it must be nothing). Then ``--kills`` kill -9
trials of ``dvc repro`` at seeded points: answers stored at the kill, answers asked again
after the restart, calls beyond an uninterrupted run's (answers lost in flight), and whether
the output is byte-identical to an uninterrupted run's. Then four hazards
(harness/hazards.py): a server that trickles answers past ``timeout_s``, a fold and a
second run beside a working shard job, a full disk under the request cache, and a kill -9 in
the middle of a large batch. Nothing is
asserted here; tests/faults holds the checks at small sizes.

Usage: python -m bench.faults [--seeds 20] [--rates 0,0.1,0.5,1] [--kills 10] [--no-hazards]
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

import pandas as pd

from harness import hazards
from harness.commands import dvc
from harness.kill import kill_when, leftovers, stored_answers
from harness.mix import FaultyServer
from harness.project import make_project, run_generate, under_dvc

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


def kill_trials(n: int, n_seeds: int, root: Path, batch: int = 8) -> pd.DataFrame:
    """``n`` kill -9 trials of ``dvc repro`` (generate) at seeded points, then a restart, all
    against the reference run's server: its address is part of the model's name on every row."""
    rows = []
    with FaultyServer(rate=0.0) as server:
        ref = under_dvc(make_project(root / "ref", server.base_url, n_seeds=n_seeds, batch_size=batch))
        pristine = root / "pristine"
        shutil.copytree(ref, pristine)
        dvc("repro", cwd=ref)
        total = len(server.requests)
        expected = (ref / SHARD).read_bytes()
        server.latency_s = 0.02
        for trial in range(n):
            rng = random.Random(trial)
            at, delay = rng.randrange(1, total - 1), rng.uniform(0.0, 0.05)  # kill mid-batch too
            project = root / f"trial-{trial}"
            shutil.copytree(pristine, project)
            reached: list[float] = []

            def ready(c: Path = project, a: int = at, d: float = delay, seen: list[float] = reached) -> bool:
                if not seen and stored_answers(c) >= a:
                    seen.append(time.perf_counter())
                return bool(seen) and time.perf_counter() - seen[0] >= d

            before = len(server.requests)
            killed = kill_when(["dvc", "repro"], project, ready)
            stored, asked = stored_answers(project), len(server.requests) - before
            start = time.perf_counter()
            dvc("repro", cwd=project)
            restart_s = time.perf_counter() - start
            again = len(server.requests) - before - asked
            rows.append({
                "trial": trial, "killed": killed, "stored at kill": stored, "of": total,
                "asked again": again, "calls wasted": asked + again - total,  # the batch lost in flight
                "byte-identical": (project / SHARD).read_bytes() == expected,
                "temp files left": len(leftovers(project)), "restart s": round(restart_s, 1),
            })  # fmt: skip
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20, help="context seeds (and as many IR seeds)")
    ap.add_argument("--rates", default="0,0.1,0.5,1")
    ap.add_argument("--kills", type=int, default=10, help="kill -9 trials (0: none)")
    ap.add_argument("--no-hazards", action="store_true", help="skip the trickle, fold and full-disk rows")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [one_rate(float(r), args.seeds, Path(tmp)) for r in args.rates.split(",")]
        print(pd.DataFrame(rows).to_string(index=False), flush=True)
        if args.kills:
            trials = kill_trials(args.kills, args.seeds, Path(tmp) / "kills")
            print()
            print(trials.to_string(index=False))
            print(f"\n{int(trials['killed'].sum())} of {len(trials)} killed mid-run; "
                  f"{int(trials['byte-identical'].sum())} byte-identical; "
                  f"at most {int(trials['calls wasted'].max())} calls more than "
                  "an uninterrupted run")  # fmt: skip
        if not args.no_hazards:
            root = Path(tmp) / "hazards"
            scenarios = (hazards.kill_mid_batch, hazards.trickle, hazards.fold_beside_a_job,
                         hazards.full_cache_disk)  # fmt: skip
            rows = [f(root, args.seeds) for f in scenarios]
            print()
            print(pd.DataFrame(rows).fillna("-").to_string(index=False))


if __name__ == "__main__":
    main()
