"""DVC stage ``taxonomy``: the indicator table the whole pipeline is keyed on.

Reads ``params.taxonomy`` (layout, input, stages); writes ``out.indicators``
(:class:`curll.schemas.IndicatorSchema`) and ``out.stats`` (per-stage counts, a DVC metric).
"""

from __future__ import annotations

from curll.config import Params
from curll.taxonomy import import_taxonomy, save_taxonomy
from pipeline.report import say


def run(params: Params) -> None:
    p = params.taxonomy
    df = import_taxonomy(p.layout, [p.input], stages=p.stages)
    save_taxonomy(df, p.out.indicators, p.out.stats)
    say(f"taxonomy: {len(df)} indicators in stages {list(p.stages)} -> {p.out.indicators}")
