"""Seeds: indicator x (word, pos) from the indicator's stage x instance type x template.

Contract of :func:`make_seeds`:
- type ``context`` uses the indicator's ``context`` templates, type ``ir`` its
  ``instruction`` templates; words come from the indicator's stage;
- ``mode="full"`` keeps the whole cross product (the paper); ``mode="sample"`` draws
  ``per_indicator[type]`` distinct (word, template) pairs without replacement (all of
  them when there are fewer);
- the draw for one indicator uses an RNG seeded by (seed, indicator id, type), so the
  table is identical on every run and changing one indicator changes only its seeds;
- an indicator without words or templates gets no seeds; stats count them.
Returns a :class:`~curll.schemas.SeedSchema` table and stats.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pandas as pd

from curll.artifacts import count_by, records
from curll.config.generation import SeedsParams
from curll.schemas.generation import SEED_TYPES, SeedSchema

#: which template kind each seed type draws from
TEMPLATE_KIND = {"context": "context", "ir": "instruction"}
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
    by_stage = {s: list(zip(g["word"], g["pos"], strict=True)) for s, g in words.groupby("stage")}
    by_kind = {
        k: g.groupby("indicator_id")["template"].apply(list).to_dict() for k, g in templates.groupby("kind")
    }
    rows: list[dict[str, Any]] = []
    missing = {"no_words": 0, "no_templates": 0}
    for ind in records(indicators):
        stage_words = by_stage.get(ind["stage"], [])
        if not stage_words:
            missing["no_words"] += 1
        for t_index, type_ in enumerate(SEED_TYPES):
            temps = by_kind.get(TEMPLATE_KIND[type_], {}).get(ind["indicator_id"], [])
            if not temps:
                missing["no_templates"] += 1
                continue
            total = len(stage_words) * len(temps)
            want = total if p.mode == "full" else getattr(p.per_indicator, type_)
            rng_key = [p.seed, int(ind["indicator_id"], 16) % (1 << 63), t_index]
            for k in _draw(total, want, rng_key):
                word, pos = stage_words[k // len(temps)]
                template = temps[k % len(temps)]
                rows.append(
                    {
                        "seed_id": seed_id(ind["indicator_id"], type_, template, word, pos),
                        **{f: ind[f] for f in _FIELDS},
                        "type": type_,
                        "template": template,
                        "word": word,
                        "pos": pos,
                    }
                )
    columns = list(SeedSchema.to_schema().columns)
    df = pd.DataFrame(rows, columns=columns).drop_duplicates("seed_id").reset_index(drop=True)
    stats = {
        "seeds": len(df),
        "per_stage_type": count_by(df, ["stage", "type"]),
        "indicators": int(df["indicator_id"].nunique()),
        "indicator_types": len(indicators) * len(SEED_TYPES),
        **missing,
    }
    return df, stats
