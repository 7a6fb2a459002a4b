"""DVC stage ``split_release``: the split records as a releasable dataset folder.

Reads ``split.out.records`` (streamed, a batch at a time) and the verify tables' model names;
writes ``out.dir`` (per-stage parquet splits + a dataset card, see :mod:`curll.release`) and
``out.stats`` (counts and the hash of the params of the data stages). Push it with
``dvc push``; others get it with ``dvc pull split_release``.
"""

from __future__ import annotations

import json

from curll.artifacts import read_table, write_json
from curll.config import Params
from curll.release import Counts, dataset_card, params_hash, write_release
from curll.schemas import ContextSchema, InstructionSchema, RecordSchema
from curll.streaming import iter_table
from pipeline.report import say

MODEL_SECTIONS = ("tokenizer", "train", "evaluate")


def run(params: Params) -> None:
    p = params.split_release
    models = sorted(
        set(read_table(params.verify.out.contexts, ContextSchema, columns=["model"])["model"])
        | set(read_table(params.verify.out.ir, InstructionSchema, columns=["model"])["model"])
    )
    # the card records how the data was made: the sections of the model stages are left out,
    # so training or evaluation params never change the released files
    dumped = params.model_dump(mode="json", exclude=set(MODEL_SECTIONS))
    digest = params_hash(dumped)

    def card(counts: Counts) -> str:
        return dataset_card(
            p.name, counts, models=models, params_digest=digest, params_json=json.dumps(dumped, indent=2)
        )

    counts = write_release(iter_table(params.split.out.records, RecordSchema), p.out.dir, card=card)
    n = sum(sum(per.values()) for per in counts.values())
    write_json(p.out.stats, {"params_hash": digest, "records": n, "files": counts})
    say(f"split_release: {n} records in {len(counts)} stage/split files -> {p.out.dir}")
