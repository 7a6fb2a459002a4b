"""Semantic dedup at scale: the approximate index (usearch, through vicinity) against the exact
one (brute force), on ``--texts`` passages of harness/corpus.py (planted near-copies) encoded with
the model2vec encoder.

Reports the approximate index's time on all texts, and on a seeded ``--sample`` of them both
indexes' times and the approximate index's recall: the share of the texts the exact index flags
as near-duplicates that it flags too (target >= 95%), and its precision. The exact index on all
texts is quadratic; ``--exact-all`` runs it anyway.

Usage: python -m bench.dedup_index [--texts 200000] [--sample 20000] [--model2vec data/models/encoder]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from curll.verify.dedup import Index, near_duplicates
from curll.verify.encoder import load_encoder
from harness.corpus import corpus


def flagged(ids: list[str], vectors: np.ndarray, threshold: float, index: Index) -> tuple[float, set[str]]:
    start = time.perf_counter()
    found = {d.id for d in near_duplicates(ids, vectors, threshold=threshold, index=index)}
    return time.perf_counter() - start, found


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--texts", type=int, default=200_000)
    ap.add_argument("--sample", type=int, default=20_000)
    ap.add_argument("--threshold", type=float, default=0.95)
    ap.add_argument("--model2vec", default="data/models/encoder")
    ap.add_argument("--exact-all", action="store_true")
    args = ap.parse_args()
    texts = list(dict.fromkeys(corpus(args.texts)))  # exact repeats are not near_duplicates: unique ones
    ids = [f"{i:08d}" for i in range(len(texts))]
    encoder = load_encoder("model2vec", args.model2vec)
    start = time.perf_counter()
    vectors = encoder.encode(texts)
    print(f"{len(texts):,} texts encoded in {time.perf_counter() - start:.1f} s", flush=True)
    t_all, approx_all = flagged(ids, vectors, args.threshold, "usearch")
    print(f"usearch, all {len(texts):,}: {t_all:.1f} s, {len(approx_all):,} flagged", flush=True)
    if args.exact_all:
        t_exact, exact_all = flagged(ids, vectors, args.threshold, "exact")
        recall = len(approx_all & exact_all) / max(len(exact_all), 1)
        print(f"exact, all: {t_exact:.1f} s, {len(exact_all):,} flagged; recall {recall:.1%}", flush=True)
    pick = np.sort(
        np.random.default_rng(0).choice(len(texts), size=min(args.sample, len(texts)), replace=False)
    )
    s_ids, s_vec = [ids[i] for i in pick], vectors[pick]
    t_e, exact = flagged(s_ids, s_vec, args.threshold, "exact")
    t_u, approx = flagged(s_ids, s_vec, args.threshold, "usearch")
    both = len(approx & exact)
    recall, precision = both / max(len(exact), 1), both / max(len(approx), 1)
    print(f"sample {len(pick):,}: exact {t_e:.1f} s ({len(exact):,} flagged), usearch {t_u:.1f} s "
          f"({len(approx):,}); recall {recall:.1%}, precision {precision:.1%}, "
          f"time {t_u / t_e:.2f}x of exact")  # fmt: skip


if __name__ == "__main__":
    main()
