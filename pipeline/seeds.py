"""DVC stage ``seeds``: indicator x word x type x template, deterministic for ``seeds.seed``.

Reads indicators, words and templates; writes ``out.seeds`` (:class:`curll.schemas.SeedSchema`)
and ``out.stats``. No seed at all stops the stage with the reasons (nothing is written).
"""

from __future__ import annotations

from itertools import chain

from tqdm.auto import tqdm

from curll.artifacts import read_table, write_json, write_table
from curll.config import Params
from curll.errors import CurllError
from curll.schemas import IndicatorSchema, SeedSchema, TemplateSchema, WordSchema
from curll.seeds import Tally, make_seeds, stream_seeds, stream_stats
from curll.streaming import write_table_stream
from pipeline.tools.console import say


def run(params: Params) -> None:
    p = params.seeds
    tables = (
        read_table(params.taxonomy.out.indicators, IndicatorSchema),
        read_table(params.vocab.out.words, WordSchema),
        read_table(params.templates.out.templates, TemplateSchema),
    )
    if p.mode == "full":  # the paper's cross product: streamed in row groups, bounded memory
        tally = Tally()
        chunks = stream_seeds(*tables, p, tally=tally)
        first = next(chunks, None)
        if first is None:  # before anything is written: an earlier table stays
            raise CurllError(_none_made(stream_stats(tables[0], tally), params), file=p.out.seeds)
        progress = tqdm(chain([first], chunks), desc="seeds", unit="chunk")
        n = write_table_stream(progress, p.out.seeds, SeedSchema)
        write_json(p.out.stats, stream_stats(tables[0], tally))
        say(f"seeds: {n:,} seeds (full) -> {p.out.seeds}")
        return
    seeds, stats = make_seeds(*tables, p)
    if seeds.empty:
        raise CurllError(_none_made(stats, params), file=p.out.seeds)
    write_table(seeds, p.out.seeds, SeedSchema)
    write_json(p.out.stats, stats)
    say(f"seeds: {len(seeds)} seeds ({p.mode}) -> {p.out.seeds}")


def _none_made(stats: dict[str, int], params: Params) -> str:
    return (
        f"no seeds: of {stats['indicator_types']} indicator x type pairs, {stats['no_templates']} have "
        f"no template and {stats['no_words']} indicators no word of their stage "
        f"(see {params.templates.out.templates} and {params.vocab.out.words})"
    )
