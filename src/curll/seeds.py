"""Seeds: indicator x (word, pos) from the indicator's stage x instance type x template.

Contract of :func:`make_seeds`:
- every seeded instance type (:mod:`curll.instances`) draws from the indicator's templates of
  its spec's ``template_kind`` (type ``context`` from ``context`` templates, type ``ir`` from
  ``instruction`` templates); words come from the indicator's stage;
- ``mode="full"`` keeps the whole cross product (the paper); ``mode="sample"`` draws
  ``per_indicator[type]`` distinct (word, template) pairs without replacement (all of
  them when there are fewer);
- the draw for one indicator uses an RNG seeded by (seed, indicator id, the type's place among
  the seeded types), so the table is identical on every run and changing one indicator changes
  only its seeds;
- an indicator without words or templates gets no seeds; stats count them.
Returns a :class:`~curll.schemas.SeedSchema` table and stats. :func:`stream_seeds` gives the
same rows in chunks, for ``mode="full"`` at the paper's size (bounded memory).
"""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from curll.artifacts import records
from curll.config.generation import SeedsParams
from curll.instances import TYPES, seeded
from curll.schemas.generation import SeedSchema

_FIELDS = ("indicator_id", "stage", "age_group", "skill", "subskill", "goal", "indicator")


def seed_id(indicator_id: str, type_: str, template: str, word: str, pos: str) -> str:
    key = "\x1f".join((indicator_id, type_, template, word, pos))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def _draw(n_total: int, n: int, rng_key: list[int]) -> list[int]:
    if n >= n_total:
        return list(range(n_total))
    return sorted(int(i) for i in np.random.default_rng(rng_key).choice(n_total, size=n, replace=False))


def make_seeds(
    indicators: pd.DataFrame, words: pd.DataFrame, templates: pd.DataFrame, p: SeedsParams
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The whole seeds table in memory (one chunk of :func:`stream_seeds`), and its stats."""
    tally = Tally()
    chunks = list(stream_seeds(indicators, words, templates, p, chunk_rows=sys.maxsize, tally=tally))
    df = chunks[0] if chunks else pd.DataFrame([], columns=list(SeedSchema.to_schema().columns))
    return df, stream_stats(indicators, tally)


def stream_seeds(
    indicators: pd.DataFrame,
    words: pd.DataFrame,
    templates: pd.DataFrame,
    p: SeedsParams,
    *,
    chunk_rows: int = 250_000,
    tally: Tally | None = None,
) -> Iterator[pd.DataFrame]:
    """The rows of :func:`make_seeds`, in the same order, as tables of about ``chunk_rows`` rows
    (never splitting an indicator; one indicator's rows are its own duplicates' scope, as a
    seed id hashes the indicator id), so the paper's full cross product (tens of millions of
    rows) is written in bounded memory. ``tally`` collects the counts for :func:`stream_stats`."""
    tally = tally if tally is not None else Tally()
    look = _Lookup(words, templates)
    columns = list(SeedSchema.to_schema().columns)
    pending: list[dict[str, Any]] = []
    for ind in records(indicators):
        rows = _indicator_rows(ind, look, p, tally)
        unique = list({r["seed_id"]: r for r in rows}.values())
        tally.count(unique)
        pending.extend(unique)
        if len(pending) >= chunk_rows:
            yield pd.DataFrame(pending, columns=columns)
            pending = []
    if pending:
        yield pd.DataFrame(pending, columns=columns)


@dataclass
class Tally:
    """Counts gathered while seeds are made: seeds per (stage, type), indicators with seeds,
    and indicators without words or templates."""

    no_words: int = 0
    no_templates: int = 0
    per_stage_type: Counter[str] = field(default_factory=Counter)
    indicators: set[str] = field(default_factory=set)

    def count(self, rows: list[dict[str, Any]]) -> None:
        self.per_stage_type.update(f"{r['stage']}/{r['type']}" for r in rows)
        self.indicators.update(r["indicator_id"] for r in rows)


def stream_stats(indicators: pd.DataFrame, tally: Tally) -> dict[str, Any]:
    """Seeds per stage and type, indicators with seeds, and those without words or templates,
    from a finished :func:`stream_seeds` run."""
    return {
        "seeds": sum(tally.per_stage_type.values()),
        "per_stage_type": dict(sorted(tally.per_stage_type.items())),
        "indicators": len(tally.indicators),
        "indicator_types": len(indicators) * len(seeded()),
        "no_words": tally.no_words,
        "no_templates": tally.no_templates,
    }


class _Lookup:
    """Words per stage and templates per (kind, indicator), built once per run."""

    def __init__(self, words: pd.DataFrame, templates: pd.DataFrame) -> None:
        self.by_stage = {s: list(zip(g["word"], g["pos"], strict=True)) for s, g in words.groupby("stage")}
        self.by_kind = {
            kind: g.groupby("indicator_id")["template"].apply(list).to_dict()
            for kind, g in templates.groupby("kind")
        }


def _indicator_rows(ind: dict[str, Any], look: _Lookup, p: SeedsParams, tally: Tally) -> list[dict[str, Any]]:
    """One indicator's seeds, in draw order (duplicates not yet removed)."""
    rows: list[dict[str, Any]] = []
    stage_words = look.by_stage.get(ind["stage"], [])
    if not stage_words:
        tally.no_words += 1
    for t_index, type_ in enumerate(seeded()):
        temps = look.by_kind.get(TYPES[type_].template_kind, {}).get(ind["indicator_id"], [])
        if not temps:
            tally.no_templates += 1
            continue
        total = len(stage_words) * len(temps)
        want = total if p.mode == "full" else p.per_indicator[type_]
        rng_key = [p.seed, int(ind["indicator_id"], 16) % (1 << 63), t_index]
        fields = {f: ind[f] for f in _FIELDS}
        for k in _draw(total, want, rng_key):
            word, pos = stage_words[k // len(temps)]
            template = temps[k % len(temps)]
            rows.append({
                "seed_id": seed_id(ind["indicator_id"], type_, template, word, pos), **fields,
                "type": type_, "template": template, "word": word, "pos": pos,
            })  # fmt: skip
    return rows
