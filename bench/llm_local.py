"""Benchmark the engine over the local transformers backend (the embedded tiny model).

Reports ratios measured in one run (never asserted in tests):
- engine overhead: engine run with a cold on-disk cache (keys, cache reads and writes,
  JSON parsing, schema validation) vs the same batches sent straight to the backend
  (target < 10%); each is timed ``--repeats`` times, alternating, and the best kept;
- warm cache: the engine rerun vs its cold run (target >= 50x).

Usage: python -m bench.llm_local [--requests 64] [--batch 16] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from curll.config import load_params
from curll.config.models import RandomModel
from curll.llm.cache import RequestCache
from curll.llm.engine import Engine
from curll.llm.local import build_embedded_model, model_config
from curll.llm.transformers_backend import TransformersBackend
from curll.llm.types import ChatRequest
from curll.sampling import Sampling

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = {
    "type": "object",
    "properties": {
        "topic": {"type": "string", "maxLength": 40},
        "pairs": {
            "type": "array",
            "minItems": 2,
            "maxItems": 2,
            "items": {
                "type": "object",
                "properties": {
                    "q": {"type": "string", "maxLength": 40},
                    "a": {"type": "string", "maxLength": 40},
                },
                "required": ["q", "a"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["topic", "pairs"],
    "additionalProperties": False,
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "model"
        spec = load_params(ROOT / "params.yaml").llm_models.builtin["embedded"]
        assert isinstance(spec, RandomModel)
        build_embedded_model(ROOT / spec.corpus, model, model_config(spec), spec.seed)
        backend = TransformersBackend(str(model), name="embedded")
        reqs = [
            ChatRequest.build(
                [("system", "Write JSON."), ("user", f"Write two questions about topic {i}.")],
                schema=SCHEMA,
                sampling=Sampling(max_tokens=1024, seed=42),  # room to finish: no retries
            )
            for i in range(args.requests)
        ]
        backend.complete(reqs[:2])  # warm up (grammar compile, first-call allocations)
        raw_times, cold_times, warm_times, rejects, retries = [], [], [], 0, 0
        for rep in range(args.repeats):
            t0 = time.perf_counter()
            for start in range(0, len(reqs), args.batch):
                backend.complete(reqs[start : start + args.batch])
            raw_times.append(time.perf_counter() - t0)
            engine = Engine(
                backend, RequestCache(Path(tmp) / f"cache{rep}.db"), batch_size=args.batch, progress=False
            )
            t0 = time.perf_counter()
            results = engine.run(reqs)
            cold_times.append(time.perf_counter() - t0)
            rejects = sum(r.status != "ok" for r in results)
            retries = engine.backend_calls - len(reqs)
            t0 = time.perf_counter()
            engine.run(reqs)
            warm_times.append(time.perf_counter() - t0)
    raw, cold, warm = min(raw_times), min(cold_times), min(warm_times)
    report = {
        "requests": args.requests,
        "batch": args.batch,
        "raw_backend_s": round(raw, 3),
        "engine_cold_s": round(cold, 3),
        "engine_warm_s": round(warm, 4),
        "engine_overhead": f"{100 * (cold / raw - 1):+.1f}%  (target < 10%)",
        "warm_speedup": f"{cold / warm:.0f}x  (target >= 50x)",
        "rejects": rejects,
        "retries": retries,  # a retry is a backend call the raw run does not make
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
