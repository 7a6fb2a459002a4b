"""DVC stage ``vocab``: stage word lists (word, part of speech) that seed generation.

Reads ``params.vocab``; writes ``out.words`` (:class:`curll.schemas.WordSchema`) and
``out.stats`` (words per stage, a DVC metric).
"""

from __future__ import annotations

from curll.config import Params
from curll.errors import fields_named
from curll.vocab import import_vocab, save_vocab
from pipeline.tools.console import say


def run(params: Params) -> None:
    p = params.vocab
    with fields_named({"stages": "vocab.stages"}):
        df = import_vocab(
            p.format,
            p.input,
            stages=p.stages,
            bands=p.bands,
            dedup=p.dedup,
            max_per_stage=p.max_per_stage,
            seed=p.seed,
        )
    save_vocab(df, p.stages, p.out.words, p.out.stats)
    say(f"vocab: {len(df)} words in stages {list(p.stages)} -> {p.out.words}")
