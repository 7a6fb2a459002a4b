"""Release layout: per-stage parquet splits plus a dataset card.

:func:`write_release` writes, atomically as one folder::

    <dir>/README.md                          dataset card (YAML header with one config per stage)
    <dir>/stage_<k>/{train,validation,test}.parquet

``datasets.load_dataset("parquet", data_dir="<dir>/stage_<k>")`` loads a stage with its
splits (split names come from the file names); ``load_dataset("<dir>", "stage_<k>")``
reads the card's configs. Columns: record_id, stage, type, skill, subskill, indicator_id,
indicator, messages (a list of {role, content}). A split with no records is left out of the
folder and of the card (``datasets`` cannot read a parquet file of zero rows: "BatchSize
must be greater than 0"), so a stage may have fewer than three files.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from curll.artifacts import atomic_dir
from curll.errors import CurllError
from curll.instances import TYPES
from curll.schemas import SPLITS
from curll.schemas.data import age_group

RELEASE_SCHEMA = pa.schema(
    [
        ("record_id", pa.string()),
        ("stage", pa.int64()),
        ("type", pa.string()),
        ("skill", pa.string()),
        ("subskill", pa.string()),
        ("indicator_id", pa.string()),
        ("indicator", pa.string()),
        ("messages", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
    ]
)


def params_hash(params: Mapping[str, Any]) -> str:
    """16 hex chars of sha256 over the params as canonical JSON."""
    payload = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def _table(df: pd.DataFrame) -> pa.Table:
    cols = {name: df[name].tolist() for name in RELEASE_SCHEMA.names if name != "messages"}
    cols["messages"] = [json.loads(m) for m in df["messages"]]
    return pa.Table.from_pydict(cols, schema=RELEASE_SCHEMA)


#: records per (stage, split, type)
Counts = Counter[tuple[int, str, str]]


def write_release(
    chunks: Iterable[pd.DataFrame], out: str | Path, *, card: Callable[[Counts], str]
) -> dict[str, Any]:
    """Write the layout above from RecordSchema rows, streamed in chunks sorted by (stage,
    split, type, record_id) as the split stage writes them (each file is appended to while its
    rows come; a (stage, split) that comes back after another began is an error). ``card``
    makes the README from the counts. Returns counts per stage, split and type."""
    counts: Counts = Counter()
    writer: pq.ParquetWriter | None = None
    with atomic_dir(out) as tmp:
        current: tuple[int, str] | None = None
        done: set[tuple[int, str]] = set()
        try:
            for chunk in chunks:
                for (stage, split), part in chunk.groupby(["stage", "split"], sort=False):
                    key = (int(str(stage)), str(split))
                    if key != current:
                        if key in done:
                            raise CurllError(
                                f"records not sorted by stage and split: stage {stage} {split} again"
                            )
                        if writer is not None:
                            writer.close()
                        folder = tmp / f"stage_{stage}"
                        folder.mkdir(exist_ok=True)
                        writer = pq.ParquetWriter(folder / f"{split}.parquet", RELEASE_SCHEMA)
                        current = key
                        done.add(key)
                    assert writer is not None
                    writer.write_table(_table(part))
                    counts.update((key[0], key[1], str(t)) for t in part["type"])
        finally:
            if writer is not None:
                writer.close()
        (tmp / "README.md").write_text(card(counts), encoding="utf-8")
    return {
        f"stage_{stage}/{split}": {
            t: n for (s, sp, t), n in sorted(counts.items()) if (s, sp) == (stage, split)
        }
        for stage, split in sorted(done, key=lambda k: (k[0], SPLITS.index(k[1])))
    }


def _listing(items: list[str], last: str = "and") -> str:
    """ "a, b and c" (or ``last`` before the last item)."""
    return ", ".join(items[:-1]) + f" {last} {items[-1]}" if len(items) > 1 else "".join(items)


def _stages(stages: list[int]) -> str:
    """``stages 0 to 4 (age groups 0-5 to 8-9)``; stages with a gap listed one by one."""
    if not stages:
        return "no stage"
    if len(stages) > 1 and stages == list(range(stages[0], stages[-1] + 1)):
        first, last = stages[0], stages[-1]
        return f"stages {first} to {last} (age groups {age_group(first)} to {age_group(last)})"
    named = _listing([f"{s} ({age_group(s)})" for s in stages])
    return f"stage{'s' if len(stages) > 1 else ''} {named}"


def _generated(models: list[str]) -> str:
    return f"""Generated by {", ".join(models)} from seeds (indicator, Age-of-Acquisition word, text-type
template), then verified (rejects with reasons, exact and semantic dedup, passage length),
rated 1-5 by the LLM; per indicator and unit type the best rated go to test, the next to
validation, the rest to train. A passage and its questions always share a split, and train
units overlapping a test unit (word n-grams) were removed."""


def dataset_card(
    name: str,
    counts: Counts,
    *,
    models: list[str],
    params_digest: str,
    params_json: str,
    license_id: str,
    made: str = "",
) -> str:
    """Markdown card with a Hugging Face YAML header; figures come from ``counts``. ``made``
    replaces the "How it was made" text of curll's own generation (records imported from
    elsewhere). ``name`` and ``license_id`` go into the header as JSON strings (valid YAML
    whatever they hold: a colon, a leading ``#``, ``yes``)."""
    stages = sorted({s for s, _, _ in counts})
    present = {(s, sp) for s, sp, _ in counts}  # a split with no records has no file
    configs = "".join(
        f"  - config_name: stage_{s}\n    data_files:\n"
        + "".join(
            f"      - split: {sp}\n        path: stage_{s}/{sp}.parquet\n"
            for sp in SPLITS
            if (s, sp) in present
        )
        for s in stages
    )
    types = sorted({t for _, _, t in counts})
    kinds = _listing([f"{t.title} ({t.name})" for t in TYPES.values()])
    by = "a sample of the CurLL authors' release, laid out by curll" if made else "made by the curll pipeline"
    about = textwrap.fill(f"A developmental curriculum dataset in the CurLL layout: {kinds} for "
                          f"{_stages(stages)}, {by}.", 96)  # fmt: skip
    header = "| stage | split | " + " | ".join(types) + " |"
    rows = [
        f"| {stage} | {split} | " + " | ".join(str(counts.get((stage, split, t), 0)) for t in types) + " |"
        for stage, split in sorted({(s, sp) for s, sp, _ in counts})
    ]
    return f"""---
pretty_name: {json.dumps(name)}
license: {json.dumps(license_id)}
language: [en]
task_categories: [text-generation]
configs:
{configs.rstrip()}
---

# {name}

{about}

## Counts (records)

{header}
|---|---|{"---|" * len(types)}
{chr(10).join(rows)}

## Columns

- `record_id`: stable id of the instance; `stage`: {_listing(list(map(str, stages)))};
  `type`: {_listing(list(TYPES), "or")}
- `skill`, `subskill`, `indicator_id`, `indicator`: the skill taxonomy entry it practises
- `messages`: the conversation, a list of `{{role, content}}` with roles system, user,
  assistant; train on (or judge) the final assistant turn

## How it was made

{made or _generated(models)}

Params hash: `{params_digest}` (sha256 of the params that made the data: the data stages'
sections and the LLM profiles used; canonical JSON, first 16 hex).

<details><summary>Params</summary>

```json
{params_json}
```

</details>
"""
