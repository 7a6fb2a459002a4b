"""DVC stage ``seeds``: indicator x word x type x template, deterministic for ``seeds.seed``.

Reads indicators, words and templates; writes ``out.seeds`` (:class:`curll.schemas.SeedSchema`)
and ``out.stats``. No seed at all stops the stage with the reasons (nothing is written).
"""

from __future__ import annotations

from curll.artifacts import read_table, write_json, write_table
from curll.config import Params
from curll.errors import CurllError
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
    if seeds.empty:
        raise CurllError(
            f"no seeds: of {stats['indicator_types']} indicator x type pairs, "
            f"{stats['no_templates']} have no template and {stats['no_words']} indicators no word "
            "of their stage "
            f"(see {params.templates.out.templates} and {params.vocab.out.words})",
            file=p.out.seeds,
        )
    write_table(seeds, p.out.seeds, SeedSchema)
    write_json(p.out.stats, stats)
    say(f"seeds: {len(seeds)} seeds ({p.mode}) -> {p.out.seeds}")
