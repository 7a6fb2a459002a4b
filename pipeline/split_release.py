"""DVC stage ``split_release``: the split records as a releasable dataset folder.

Reads ``split.out.records`` (streamed, a batch at a time) and the model names of the verify
tables of the seeded instance types (the models that wrote the data; with ``split.source:
import`` no verify table: the card says which release sample the records are, and names the
repositories that ``split.out.stats`` lists); writes
``out.dir`` (per-stage parquet splits + a dataset card, see :mod:`curll.release`) and
``out.stats`` (counts and the hash of the params of the data stages). Push it with
``dvc push``; others get it with ``dvc pull split_release``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from curll.artifacts import read_table, write_json
from curll.config import Params
from curll.instances import seeded
from curll.release import Counts, dataset_card, params_hash, write_release
from curll.schemas import RecordSchema, instance_schema
from curll.streaming import iter_table
from pipeline.tools.console import say

#: the params sections of the stages that make the data, recorded whole on the card
DATA_SECTIONS = (
    "taxonomy", "vocab", "llm_models", "skill_graph", "templates", "seeds", "generate",
    "generate_merge", "verify_encoder", "verify", "split", "split_release",
)  # fmt: skip


def card_keys(params: Params) -> list[str]:
    """The params keys the card records: the data sections and the LLM profiles in use (the
    generating one and split's rater), never the model stages' sections nor a profile no data
    stage asked. dvc.yaml declares the same keys for this stage (tests/pipeline/test_dvc_yaml.py
    checks), so any edit the card would show reruns it."""
    profiles = dict.fromkeys([params.llm.use, params.split.rater])
    llm = ["llm.use", "llm.attempts", "llm.failures"]  # how the answers were asked and kept
    return [*DATA_SECTIONS, *llm, *(f"llm.profiles.{name}" for name in profiles)]


def card_params(params: Params) -> dict[str, Any]:
    """``params`` (as JSON values) cut to :func:`card_keys`, nested as in params.yaml."""
    dumped: dict[str, Any] = params.model_dump(mode="json")
    out: dict[str, Any] = {}
    for key in card_keys(params):
        *path, last = key.split(".")
        src, dst = dumped, out
        for part in path:
            src, dst = src[part], dst.setdefault(part, {})
        dst[last] = src[last]
    return out


def run(params: Params) -> None:
    p, imp = params.split_release, params.split.imported
    made, models = "", []
    if params.split.source == "import":
        repos = json.loads(Path(params.split.out.stats).read_text(encoding="utf-8")).get("repositories", [])
        made = textwrap.fill(
            f"Imported from the CurLL authors' release ({imp.layout} repositories under {imp.dir}: "
            f"{', '.join(repos) or 'none listed'}; the license above is split_release.license: set it to "
            "theirs): at "
            f"most {imp.train} train, {imp.validation} validation and {imp.test} test questions per stage "
            "and type, and a passage record for each passage they ask about (curll wrote its request), "
            f"a sample seeded by split.seed ({params.split.seed}); the release's own splits are kept.",
            96,
        )
    else:
        tables = [read_table(params.verify.out.table(k), instance_schema(k), columns=["model"])
                  for k in seeded()]  # fmt: skip
        models = sorted({m for t in tables for m in t["model"]})
    dumped = card_params(params)
    digest = params_hash(dumped)

    def card(counts: Counts) -> str:
        return dataset_card(p.name, counts, models=models, params_digest=digest, license_id=p.license,
                            params_json=json.dumps(dumped, indent=2), made=made)  # fmt: skip

    counts = write_release(iter_table(params.split.out.records, RecordSchema), p.out.dir, card=card)
    n = sum(sum(per.values()) for per in counts.values())
    write_json(p.out.stats, {"params_hash": digest, "records": n, "files": counts})
    say(f"split_release: {n} records in {len(counts)} stage/split files -> {p.out.dir}")
