"""DVC stage ``taxonomy``: the indicator table the whole pipeline is keyed on.

Reads ``params.taxonomy`` (layout, input, stages, and ``per_stage``: a seeded sample of at
most that many indicators per stage, for small runs); writes ``out.indicators``
(:class:`curll.schemas.IndicatorSchema`) and ``out.stats`` (per-stage counts, a DVC metric).
"""

from __future__ import annotations

from curll.config import Params
from curll.taxonomy import import_taxonomy, sample_per_stage, save_taxonomy
from pipeline.report import say


def run(params: Params) -> None:
    p = params.taxonomy
    df = sample_per_stage(import_taxonomy(p.layout, [p.input], stages=p.stages), p.per_stage, p.seed)
    save_taxonomy(df, p.out.indicators, p.out.stats)
    say(f"taxonomy: {len(df)} indicators in stages {list(p.stages)} -> {p.out.indicators}")
