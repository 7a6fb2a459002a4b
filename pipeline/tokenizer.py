"""DVC stage ``tokenizer``: train (or fetch) the tokenizer the models are trained with.

Reads the train split of ``split.out.records`` (streamed); writes the tokenizer folder ``out.dir``
(``AutoTokenizer.from_pretrained`` loads it) and ``out.stats``.
"""

from __future__ import annotations

from collections.abc import Iterator

from curll.artifacts import read_table, write_json
from curll.config import Params
from curll.schemas import RecordSchema
from curll.streaming import iter_table
from curll.train.tokenizer import build_tokenizer, save_tokenizer
from pipeline.tools.console import say


def run(params: Params) -> None:
    p = params.tokenizer
    path = params.split.out.records

    def train() -> Iterator[str]:  # the train messages, a batch of the records file at a time
        for chunk in iter_table(path, RecordSchema, columns=["split", "messages"]):
            yield from chunk.loc[chunk["split"] == "train", "messages"]

    tok = build_tokenizer(p, train())
    n = int((read_table(path, RecordSchema, columns=["split"])["split"] == "train").sum())
    stats = {**save_tokenizer(tok, p.out.dir), "source": p.source, "train_records": n}
    write_json(p.out.stats, stats)
    say(f"tokenizer: {stats['vocab_size']} tokens ({p.source}) -> {p.out.dir}")
