"""DVC stage ``seeds``: indicator x word x type x template, deterministic for ``seeds.seed``.

Reads indicators, words and templates; writes ``out.seeds`` (:class:`curll.schemas.SeedSchema`)
and ``out.stats``.
"""

from __future__ import annotations

from curll.artifacts import read_table, write_json, write_table
from curll.config import Params
from curll.schemas import IndicatorSchema, SeedSchema, TemplateSchema, WordSchema
from curll.seeds import make_seeds
from pipeline.report import say


def run(params: Params) -> None:
    p = params.seeds
    seeds, stats = make_seeds(
        read_table(params.taxonomy.out.indicators, IndicatorSchema),
        read_table(params.vocab.out.words, WordSchema),
        read_table(params.templates.out.templates, TemplateSchema),
        p,
    )
    write_table(seeds, p.out.seeds, SeedSchema)
    write_json(p.out.stats, stats)
    say(f"seeds: {len(seeds)} seeds ({p.mode}) -> {p.out.seeds}")
