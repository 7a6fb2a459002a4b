"""DVC stage ``split_release``: the split records as a releasable dataset folder.

Reads ``split.out.records`` and the verify tables' model names; writes ``out.dir`` (per-stage
parquet splits + a dataset card, see :mod:`curll.release`) and ``out.stats`` (counts and the
hash of the params of the data stages). Push it with ``dvc push``; others get it with
``dvc pull split_release``.
"""

from __future__ import annotations

import json

from curll.artifacts import read_table, write_json
from curll.config import Params
from curll.release import dataset_card, params_hash, write_release
from curll.schemas import ContextSchema, InstructionSchema, RecordSchema
from pipeline.report import say

MODEL_SECTIONS = ("tokenizer", "train", "evaluate")


def run(params: Params) -> None:
    p = params.split_release
    records = read_table(params.split.out.records, RecordSchema)
    models = sorted(
        set(read_table(params.verify.out.contexts, ContextSchema)["model"])
        | set(read_table(params.verify.out.ir, InstructionSchema)["model"])
    )
    # the card records how the data was made: the sections of the model stages are left out,
    # so training or evaluation params never change the released files
    dumped = params.model_dump(mode="json", exclude=set(MODEL_SECTIONS))
    digest = params_hash(dumped)
    card = dataset_card(
        p.name, records, models=models, params_digest=digest, params_json=json.dumps(dumped, indent=2)
    )
    counts = write_release(records, p.out.dir, card=card)
    write_json(p.out.stats, {"params_hash": digest, "records": len(records), "files": counts})
    say(f"split_release: {len(records)} records in {len(counts)} stage/split files -> {p.out.dir}")
