"""Hand-made instance tables (generate_merge's schemas) for verify and split unit tests."""

from __future__ import annotations

import hashlib
from typing import Any

import pandas as pd

from curll.schemas import instance_schema


def hx(s: str, n: int = 16) -> str:
    return hashlib.sha256(s.encode()).hexdigest()[:n]


def _prov(key: str, stage: int, indicator: str) -> dict[str, Any]:
    return {
        "request_key": hx(key, 64), "model": "m", "backend": "transformers", "sampling": "{}",
        "prompt_version": hx("p"), "prompt_hash": hx(key), "raw": "", "status": "ok", "reason": "",
        "attempts": 1, "instance_id": hx(key), "seed_id": hx("s" + key), "indicator_id": hx(indicator),
        "stage": stage, "template": "a story", "word": "cat", "pos": "Noun",
    }  # fmt: skip


def contexts(rows: list[tuple[str, int, str, str]]) -> pd.DataFrame:
    """rows: (key, stage, indicator, text)."""
    out = [{**_prov(k, s, ind), "expanded_topic": "topic " + k, "text": t} for k, s, ind, t in rows]
    return pd.DataFrame(out, columns=list(instance_schema("context").to_schema().columns))


def ir(rows: list[tuple[str, int, str, str, str]]) -> pd.DataFrame:
    """rows: (key, stage, indicator, instruction, response)."""
    out = [{**_prov(k, s, ind), "instruction": i, "response": r} for k, s, ind, i, r in rows]
    return pd.DataFrame(out, columns=list(instance_schema("ir").to_schema().columns))


def qa(kind: str, context: pd.DataFrame, pairs: dict[str, list[tuple[str, str]]]) -> pd.DataFrame:
    """pairs: {context key: [(question, answer), ...]} for contexts made by :func:`contexts`."""
    out = []
    by_id = context.set_index("instance_id")
    for key, items in pairs.items():
        c = by_id.loc[hx(key)]
        for n, (q, a) in enumerate(items, start=1):
            base = _prov(f"{kind}{key}{n}", int(str(c["stage"])), "")
            base["indicator_id"] = c["indicator_id"]
            out.append(
                {**base, "context_id": hx(key), "type": kind, "q_index": n, "question": q, "answer": a}
            )
    return pd.DataFrame(out, columns=list(instance_schema(kind).to_schema().columns))


def indicators(names: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "indicator_id": [hx(n) for n in names],
            "stage": 0,
            "age_group": "5-6",
            "skill": "Reading",
            "subskill": "Comprehension",
            "goal": "Understand stories",
            "indicator": [f"Indicator {n}" for n in names],
        }
    )
