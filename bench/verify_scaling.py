"""Verify time for N and 4N passages: growth should be no worse than linear plus 10%.

Builds contexts / IR tables of N and 4N rows (harness/corpus.py texts spread over five stages,
with planted near-copies) and runs :func:`harness.verify.verify` on each with the default
params (model2vec encoder, ``--index``). Reports both times and ``t(4N) / (4 t(N))``
(target <= 1.10).

Usage: python -m bench.verify_scaling [--n 2500] [--index exact]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time

import pandas as pd

from curll.config import load_params
from curll.schemas import GenerationSchema, instance_schema
from curll.verify.encoder import load_encoder
from curll.verify.screen import Settings
from harness.corpus import corpus
from harness.verify import verify


def _hex(s: str, n: int = 16) -> str:
    return hashlib.sha256(s.encode()).hexdigest()[:n]


def _base(i: int, kind: str) -> dict[str, object]:
    return {
        "request_key": _hex(f"{kind}{i}", 64), "model": "bench", "backend": "transformers", "sampling": "{}",
        "prompt_version": _hex("p"), "prompt_hash": _hex(f"h{i}"), "raw": "", "status": "ok", "reason": "",
        "attempts": 1, "instance_id": _hex(f"{kind}{i}"), "seed_id": _hex(f"s{kind}{i}"),
        "indicator_id": _hex(f"ind{i % 50}"), "stage": i % 5, "template": "a story", "word": "cat",
        "pos": "Noun",
    }  # fmt: skip


def tables(n: int) -> dict[str, pd.DataFrame]:
    texts = corpus(2 * n, seed=n)
    ctx = [{**_base(i, "c"), "expanded_topic": "a topic", "text": texts[i]} for i in range(n)]
    ir = [{**_base(i, "i"), "instruction": texts[n + i][:80], "response": texts[n + i]} for i in range(n)]

    def empty(kind: str) -> pd.DataFrame:
        frame = pd.DataFrame(columns=list(instance_schema(kind).to_schema().columns))
        return frame.astype({"stage": "int64", "q_index": "int64", "attempts": "int64"})

    return {
        "context": pd.DataFrame(ctx, columns=list(instance_schema("context").to_schema().columns)),
        "ir": pd.DataFrame(ir, columns=list(instance_schema("ir").to_schema().columns)),
        "cqa": empty("cqa"),
        "csqa": empty("csqa"),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2500)
    ap.add_argument("--index", choices=["exact", "usearch"], default="exact")
    args = ap.parse_args()
    params = load_params()
    p = params.verify.model_copy(
        update={"semantic": params.verify.semantic.model_copy(update={"index": args.index})}
    )
    encoder = load_encoder("model2vec", params.verify_encoder.out.model)
    gens = pd.DataFrame(columns=list(GenerationSchema.to_schema().columns))
    words = p.context_words.default.model_copy(update={"min": 1, "max": 10_000})
    times = {}
    for n in (args.n, 4 * args.n):
        data = tables(n)
        t0 = time.perf_counter()
        checks = p.content.default  # every content check on: part of what verify costs
        topics = {i: f"indicator {i}" for i in set(data["context"]["indicator_id"])}
        settings = Settings(p, words=words, qa_pairs={"cqa": 5, "csqa": 3}, checks=checks, topics=topics)
        verify(data, gens, encoder, settings)
        times[n] = time.perf_counter() - t0
    small, big = times[args.n], times[4 * args.n]
    report = {
        "n": args.n,
        "index": args.index,
        "t_n_s": round(small, 3),
        "t_4n_s": round(big, 3),
        "growth_vs_linear": f"{big / (4 * small):.3f}  (target <= 1.10)",
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
