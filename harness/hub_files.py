"""Small repository folders in the CurLL authors' Hub layout, written with exactly the columns and
types their dataset cards list (../shared/reference/curll-release.md): what a user gets from
``huggingface-cli download Pavankalyan/<name> --repo-type dataset --local-dir <name>``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

S = pa.string()
I64 = pa.int64()
PAIRS = pa.list_(pa.struct([("answer", S), ("question", S)]))
META = [("id", S), ("indicator", S), ("skill", S), ("subskill", S), ("goal", S), ("age_group", S)]

#: kind -> the card's columns and types (``stage`` is a string here; some cards have int64)
COLUMNS: dict[str, list[tuple[str, pa.DataType]]] = {
    "cqa": [("context", S), ("age_group", S), ("stage", S), ("answer", S), ("question", S)],
    "csqa": [("answer", S), ("user", S), ("invalid_case", I64), ("expanded_topic", S), ("output", S),
             ("id", S), ("indicator", S), ("skill", S), ("subskill", S), ("goal", S), ("age_group", S),
             ("stage", S), ("context_template", S), ("word_list", S), ("csqa", PAIRS)],
    "instruct": [("answer", S), ("user", S), ("invalid_case", I64), ("instruction", S), ("response", S),
                 ("expanded_topic", S), ("output", S), *META[:5], ("age_group", S), ("stage", S),
                 ("instruct_template", S), ("word_list", S)],
    "cqa_eval": [*META, ("stage", S), ("prompt", S), ("response", S), ("question", S), ("context", S),
                 ("q_index", I64)],
    "instruct_eval": [*META, ("stage", S), ("response", S), ("prompt", S), ("question", S)],
}  # fmt: skip
COLUMNS["csqa_eval"] = COLUMNS["cqa_eval"]


def rows(kind: str, stage: int, n: int, *, pairs: int = 2, tag: str = "") -> list[dict[str, Any]]:
    """``n`` rows of ``kind`` for ``stage``: an eval kind gives two questions per ``id``, csqa
    ``pairs`` questions a row; every text names its row so a record can be traced back."""
    out = []
    for i in range(n):
        meta = {"id": f"{tag}id{i // 2 if kind.endswith('_eval') else i}", "indicator": f"Counts to {stage}0",
                "skill": "Maths", "subskill": "Number", "goal": "Count", "age_group": "5-6"}  # fmt: skip
        text = f"Passage {tag}{i // 2 if kind.endswith('_eval') else i} of stage {stage}."
        row: dict[str, Any] = {name: "" for name, _ in COLUMNS[kind]}
        row.update({k: v for k, v in meta.items() if k in row})
        row.update(stage=str(stage), invalid_case=0, q_index=i % 2, word_list="('cat', 'NOUN')")
        row.update(context=text, output=text, question=f"Question {tag}{i}?", answer=f"Answer {tag}{i}.",
                   response=f"Answer {tag}{i}.", instruction=f"Do thing {tag}{i}.", prompt=f"{text} Q{i}?",
                   csqa=[{"answer": f"Answer {tag}{i}.{j}", "question": f"Question {tag}{i}.{j}?"}
                         for j in range(pairs)])  # fmt: skip
        out.append({k: row[k] for k, _ in COLUMNS[kind]})
    return out


def write_repo(
    root: Path,
    name: str,
    kind: str,
    splits: dict[str, list[dict[str, Any]]],
    *,
    stage_type: pa.DataType = S,
    files: int = 1,
    row_group_rows: int | None = None,
) -> Path:
    """``root/name/data/<split>-0000i-of-0000n.parquet`` (rows dealt over ``files`` files, in row
    groups of ``row_group_rows``: one a file when None) and a card."""
    folder = root / name
    (folder / "data").mkdir(parents=True)
    schema = pa.schema([(c, stage_type if c == "stage" else t) for c, t in COLUMNS[kind]])
    for split, table in splits.items():
        for f in range(files):
            part = table[f::files]
            if stage_type != S:
                part = [{**r, "stage": int(r["stage"])} for r in part]
            pq.write_table(pa.Table.from_pylist(part, schema=schema),
                           folder / "data" / f"{split}-{f:05d}-of-{files:05d}.parquet",
                           row_group_size=row_group_rows)  # fmt: skip
    (folder / "README.md").write_text(f"---\ndataset_info:\n  config_name: default\n---\n# {name}\n")
    return folder
