"""Readability in worker processes against one process, on the same texts.

Scores ``--texts`` distinct passages (harness/corpus.py) with :func:`curll.verify.score`
once with ``--workers`` and once with ``workers=1``; reports both times (best of
``--repeats``, new texts each repeat), the speedup (target >= 1.7x on 2 cores) and whether
every value is identical (target: yes).

Usage: python -m bench.readability [--texts 4000] [--workers 2] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from curll.verify.readability import score
from harness.corpus import corpus


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--texts", type=int, default=4000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    times: dict[int, list[float]] = {1: [], args.workers: []}
    results: dict[int, np.ndarray] = {}
    for rep in range(args.repeats):
        texts = list(dict.fromkeys(corpus(args.texts, planted=0.0, seed=100 + rep)))
        for workers in (args.workers, 1):
            t0 = time.perf_counter()
            results[workers] = score(texts, workers=workers)
            times[workers].append(time.perf_counter() - t0)
        identical = bool(np.array_equal(results[1], results[args.workers]))
    one, many = min(times[1]), min(times[args.workers])
    report = {
        "texts": args.texts,
        "workers": args.workers,
        "one_process_s": round(one, 3),
        "workers_s": round(many, 3),
        "speedup": f"{one / many:.2f}x  (target >= 1.7x)",
        "identical_values": identical,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
