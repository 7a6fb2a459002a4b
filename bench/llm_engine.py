"""Benchmark the LLM engine against a local OpenAI-compatible server with fixed latency.

Reports ratios measured in one run (never asserted in tests):
- openai backend throughput at concurrency 8 vs concurrency 1 (target >= 4x);
- engine rerun with a warm cache vs the first, cold run (target >= 50x).

Usage: python -m bench.llm_engine [--requests 64] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from curll.llm.cache import RequestCache
from curll.llm.engine import Engine
from curll.llm.openai_backend import OpenAIBackend
from curll.llm.types import ChatRequest
from harness.server import FakeChatServer

SCHEMA = {"type": "object", "properties": {"echo": {"type": "string"}}, "required": ["echo"]}


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.05, help="server seconds per answer")
    args = ap.parse_args()
    reqs = [ChatRequest.build([("user", f"q{i}")], schema=SCHEMA) for i in range(args.requests)]
    with FakeChatServer(latency_s=args.latency) as srv, tempfile.TemporaryDirectory() as tmp:
        seq = timed(lambda: OpenAIBackend("m", base_url=srv.base_url, concurrency=1).complete(reqs))
        par = timed(lambda: OpenAIBackend("m", base_url=srv.base_url, concurrency=8).complete(reqs))
        engine = Engine(
            OpenAIBackend("m", base_url=srv.base_url, concurrency=8),
            RequestCache(Path(tmp) / "c.db"),
            progress=False,
        )
        cold = timed(lambda: engine.run(reqs))
        warm = timed(lambda: engine.run(reqs))
    report = {
        "requests": args.requests,
        "server_latency_s": args.latency,
        "concurrency1_req_per_s": round(args.requests / seq, 1),
        "concurrency8_req_per_s": round(args.requests / par, 1),
        "concurrency8_over_1": round(seq / par, 2),
        "cold_run_s": round(cold, 3),
        "warm_run_s": round(warm, 4),
        "warm_speedup": round(cold / warm, 1),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
