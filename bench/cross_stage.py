"""verify's cross-stage near-duplicate rates: one index per earlier stage (what verify does,
:class:`curll.verify.dedup.CrossIndex`) against one index per pair of stages (before), in one run.

Each of ``--stages`` stages holds ``--rows`` unit vectors of ``--dims`` dimensions (seeded; a
share of each later stage copies earlier rows with a little noise, so there is something to
find). For every pair (i, j), i < j, both ways compute the share of stage j's rows with a
near duplicate in stage i; the report gives both times, their ratio, and whether every rate is
the same.

Usage: python -m bench.cross_stage [--stages 5] [--rows 20000] [--dims 128] [--index exact|usearch]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from curll.verify.dedup import CrossIndex


def stages(n_stages: int, rows: int, dims: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    for _ in range(n_stages):
        x = rng.standard_normal((rows, dims)).astype(np.float32)
        if out:  # 5% of the rows repeat an earlier stage's, slightly changed
            src = out[int(rng.integers(len(out)))]
            picks = rng.choice(rows, size=rows // 20, replace=False)
            x[picks] = src[picks] + 0.01 * rng.standard_normal((len(picks), dims)).astype(np.float32)
        out.append(x / np.linalg.norm(x, axis=1, keepdims=True))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stages", type=int, default=5)
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--dims", type=int, default=128)
    ap.add_argument("--threshold", type=float, default=0.95)
    ap.add_argument("--index", choices=["exact", "usearch"], default="usearch")
    args = ap.parse_args()
    vecs = stages(args.stages, args.rows, args.dims)
    pairs = [(i, j) for i in range(len(vecs)) for j in range(i + 1, len(vecs))]

    start = time.perf_counter()
    per_pair = [
        CrossIndex(vecs[i], args.index).rate(vecs[j], threshold=args.threshold) for i, j in pairs
    ]  # a new index for every pair
    before = time.perf_counter() - start

    start = time.perf_counter()
    once: list[float] = []
    for i in range(len(vecs)):
        earlier = CrossIndex(vecs[i], args.index)
        once += [earlier.rate(vecs[j], threshold=args.threshold) for j in range(i + 1, len(vecs))]
    after = time.perf_counter() - start

    print(
        f"{args.stages} stages x {args.rows:,} rows, {args.dims} dims, {args.index} index, {len(pairs)} pairs"
    )
    print(f"an index per pair (before):          {before:8.2f} s")
    print(f"an index per earlier stage (verify): {after:8.2f} s   ratio {before / after:.2f}x")
    print(f"same rates: {per_pair == once} ({', '.join(f'{r:.3f}' for r in once)})")


if __name__ == "__main__":
    main()
