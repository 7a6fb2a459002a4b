"""A misbehaving OpenAI-compatible server for the fault suite (tests/faults, bench/faults.py).

:class:`FaultMix` picks each request's fate from a seed, the request's content and how often
that content was asked before: at rate ``r`` a share ``r`` of HTTP calls get one of
:data:`FAULTS` (equally likely), the rest a good answer. The choice does not depend on
arrival order, so a run is reproducible under any concurrency.

:func:`schema_answer` is the good answer: a JSON value that satisfies the request's schema
(sent as ``response_format``), with English words drawn from the request's hash, so the
generate stage's checks (no empty field, no copy of the prompt, enough words, English)
pass as they would on a capable model.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections import Counter
from typing import Any

from harness.server import FakeChatServer

#: every misbehaviour the mix draws from (see harness/server.py for each)
FAULTS = ("429", "500", "503", "400", "timeout", "malformed", "not-json", "schema-invalid")
#: the faults the backend retries itself; the others reach the engine (a new attempt) at once
TRANSIENT = {"429", "500", "503", "timeout", "malformed"}

WORDS = [
    "the",
    "a",
    "little",
    "big",
    "happy",
    "sunny",
    "garden",
    "friend",
    "bird",
    "tree",
    "water",
    "school",
    "book",
    "story",
    "river",
    "green",
    "yellow",
    "morning",
    "evening",
    "play",
    "read",
    "write",
    "count",
    "share",
    "help",
    "kind",
    "quiet",
    "loud",
    "ball",
    "apple",
    "teacher",
    "family",
    "house",
    "window",
    "road",
    "cloud",
    "rain",
    "light",
    "warm",
    "cold",
    "small",
    "tall",
    "walk",
    "run",
    "jump",
    "sing",
    "draw",
    "build",
    "carry",
    "open",
    "close",
    "find",
    "learn",
    "listen",
    "answer",
    "question",
    "every",
]


def schema_answer(schema: dict[str, Any], rng: random.Random) -> Any:
    """A value satisfying ``schema`` (objects, arrays, strings, integers, numbers, booleans)."""
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        return {k: schema_answer(v, rng) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        n = max(schema.get("minItems", 1), min(schema.get("maxItems", 2), 2))
        return [schema_answer(schema.get("items", {}), rng) for _ in range(n)]
    if kind == "string":
        low, high = schema.get("minLength", 1), schema.get("maxLength", 200)
        words: list[str] = []
        while len(" ".join(words)) < max(low, min(60, high)):
            words.append(rng.choice(WORDS))
        text = " ".join(words).capitalize()
        return text[:high].rstrip() + ("." if len(text) < high else "")
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 0.5))
    if kind == "boolean":
        return True
    return None


class FaultMix:
    """The action for each request: a fault with probability ``rate``, else ``"ok"``."""

    def __init__(self, rate: float, seed: int = 0) -> None:
        self.rate, self.seed = rate, seed
        self.asked: Counter[str] = Counter()
        self.drawn: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        content = json.dumps([body["messages"], body.get("seed")], sort_keys=True)
        with self._lock:
            nth = self.asked[content]
            self.asked[content] += 1
        digest = hashlib.sha256(f"{self.seed}:{nth}:{content}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        action = FAULTS[digest[8] % len(FAULTS)] if u < self.rate else "ok"
        with self._lock:
            self.drawn[action] += 1
        return action


class FaultyServer(FakeChatServer):
    """:class:`FakeChatServer` whose good answers satisfy each request's schema."""

    def __init__(self, rate: float, seed: int = 0, timeout_sleep_s: float = 3.0, port: int = 0) -> None:
        super().__init__(timeout_sleep_s=timeout_sleep_s, port=port)
        self.mix = FaultMix(rate, seed)
        self.pick = self.mix

    def answer(self, body: dict[str, Any]) -> str:
        fmt = body.get("response_format") or {}
        schema = fmt.get("json_schema", {}).get("schema")
        rng = random.Random(hashlib.sha256(json.dumps(body["messages"]).encode()).digest())
        if schema is None:
            return " ".join(rng.choice(WORDS) for _ in range(12))
        return json.dumps(schema_answer(schema, rng))
