"""DVC stage ``tokenizer``: train (or fetch) the tokenizer the models are trained with.

Reads the train split of ``split.out.records``; writes the tokenizer folder ``out.dir``
(``AutoTokenizer.from_pretrained`` loads it) and ``out.stats``.
"""

from __future__ import annotations

from curll.artifacts import read_table, write_json
from curll.config import Params
from curll.schemas import RecordSchema
from curll.train.tokenizer import build_tokenizer, save_tokenizer
from pipeline.report import say


def run(params: Params) -> None:
    p = params.tokenizer
    records = read_table(params.split.out.records, RecordSchema)
    train = records.loc[records["split"] == "train", "messages"]
    tok = build_tokenizer(p, train)
    stats = {**save_tokenizer(tok, p.out.dir), "source": p.source, "train_records": len(train)}
    write_json(p.out.stats, stats)
    say(f"tokenizer: {stats['vocab_size']} tokens ({p.source}) -> {p.out.dir}")
