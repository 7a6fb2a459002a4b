"""Run the engine over N requests against a server and write the results as JSON lines.

Usage: python -m tests.llm.crash_worker BASE_URL CACHE_DB OUT N
Used by test_crash_resume: the parent kills this process with SIGKILL mid-way.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from curll.artifacts import atomic_write_text
from curll.llm.cache import RequestCache
from curll.llm.engine import Engine
from curll.llm.openai_backend import OpenAIBackend
from curll.llm.types import ChatRequest

SCHEMA = {"type": "object", "properties": {"echo": {"type": "string"}}, "required": ["echo"]}


def main() -> None:
    base_url, cache_db, out, n = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
    requests = [ChatRequest.build([("user", f"question {i}")], schema=SCHEMA) for i in range(n)]
    engine = Engine(
        OpenAIBackend("tiny", base_url=base_url, concurrency=2),
        RequestCache(cache_db),
        batch_size=4,
        progress=False,
    )
    rows = [dataclasses.asdict(r) for r in engine.run(requests)]
    for row in rows:
        row.pop("cached")  # differs between a resumed and an uninterrupted run by design
        row.pop("latency_s")
        # the server (its port) is part of the model, and so of the key: runs against two
        # servers are compared by what was answered
        row.pop("model")
        row.pop("key")
    atomic_write_text(out, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


if __name__ == "__main__":
    main()
