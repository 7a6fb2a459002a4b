"""What one :meth:`Engine.run <curll.llm.engine.Engine.run>` cost: requests, tokens, seconds.

Every run (one task of one stage) makes a :class:`Usage`; the engine keeps them
(``engine.usage``), prints one line each with its progress bar, and appends them as JSON
lines to its ``usage_log`` (the LLM stages: ``usage.jsonl`` beside ``llm.cache``, outside
DVC, like the cache). ``bench/llm_backends.py`` reads that log to compare backends task by
task. Nothing here is an output of a stage: times differ on every run, and outputs must not.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Usage:
    """One run of one task. ``sent``: requests the backend answered (retries included; the
    rest were cache hits); tokens count the backend's answers only, never cached ones.
    ``retried``: the failed attempts behind the results, by the reason's first word (``invalid
    JSON``, ``echo``, ``degenerate``...), cached attempts included (a rerun from the cache
    shows the same tally as the run that asked)."""

    label: str  # the task (its prompt file's name), or the engine's desc
    desc: str
    model: str
    backend: str
    requests: int = 0
    cached: int = 0
    sent: int = 0
    ok: int = 0
    rejected: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    retried: dict[str, int] = field(default_factory=dict)

    def retry(self, reason: str) -> None:
        head = reason.split(":", 1)[0]
        self.retried[head] = self.retried.get(head, 0) + 1

    def line(self) -> str:
        """One line for people: ``generate: context: 40 requests (3 cached), 52 sent, 35 ok;
        11,234 tokens in 183 s (61/s)``; the label once when it is the engine's desc."""
        rate = self.completion_tokens / self.seconds if self.seconds else 0.0
        name = self.desc if self.label == self.desc else f"{self.desc}: {self.label}"
        return (
            f"{name}: {self.requests} requests ({self.cached} cached), {self.sent} sent, "
            f"{self.ok} ok; {self.completion_tokens:,} tokens in {self.seconds:.0f} s ({rate:.0f}/s)"
            + (
                f"; retried: {', '.join(f'{k} {v}' for k, v in sorted(self.retried.items()))}"
                if self.retried
                else ""
            )
        )


def append(log: Path, usage: Usage) -> None:
    """Append ``usage`` to ``log`` as one JSON line (a single write in append mode, so processes
    sharing the file, such as generate shards, never interleave a line)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    record = {"time": round(time.time(), 3), **asdict(usage), "seconds": round(usage.seconds, 3)}
    with log.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
