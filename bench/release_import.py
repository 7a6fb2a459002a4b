"""Peak memory and time of ``curll release import`` on generated repositories of N and N/4 rows.

    python -m bench.release_import --rows 1000000

Writes ``stage3_cqa_eval`` folders in the authors' card layout (harness/hub_files.py's
columns; passages of about 600 characters, two questions a passage, row groups of 50,000 rows
as the Hub's files have), then runs, each as its own process (peak RSS of that process alone,
:func:`bench.scale.measured`):

- the import of N/4 rows and of N rows (streamed: its peak should not grow with N);
- the split stage's sample of the N-row file (``split.source: import``: 200 test records drawn,
  beside a 100-row ``stage3_cqa`` train folder), which reads only the row groups it draws from;
- the baseline: ``pandas.read_parquet`` of the N-row file, what holding the table costs.

Prints a JSON line per run and a markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from bench.scale import measured
from harness.hub_files import COLUMNS, rows, write_repo

WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "a",
    "warm",
    "mat",
    "and",
    "looked",
    "at",
    "the",
    "small",
    "red",
    "ball",
    "near",
    "the",
    "door",
]


def write_eval_repo(root: Path, n: int, *, group: int = 50_000) -> Path:
    """``root/stage3_cqa_eval/data/test-00000-of-00001.parquet`` with ``n`` rows, written a row
    group at a time (the generator holds one group)."""
    folder = root / "stage3_cqa_eval"
    (folder / "data").mkdir(parents=True)
    schema = pa.schema(COLUMNS["cqa_eval"])
    with pq.ParquetWriter(folder / "data" / "test-00000-of-00001.parquet", schema) as writer:
        for start in range(0, n, group):
            idx = range(start, min(n, start + group))
            passage = [
                " ".join(WORDS[(i + j) % len(WORDS)] for j in range(120)) + f" ({i // 2})" for i in idx
            ]
            cols = {
                "id": [f"id{i // 2}" for i in idx], "indicator": ["Counts objects to 20"] * len(idx),
                "skill": ["Maths"] * len(idx), "subskill": ["Number"] * len(idx),
                "goal": ["Count"] * len(idx), "age_group": ["7-8"] * len(idx), "stage": ["3"] * len(idx),
                "prompt": [f"{p}\nWhat is on the mat? ({i})" for p, i in zip(passage, idx, strict=True)],
                "response": [f"The cat sits on the mat, answer {i}." for i in idx],
                "question": [f"What is on the mat? ({i})" for i in idx], "context": passage,
                "q_index": [i % 2 for i in idx],
            }  # fmt: skip
            writer.write_table(pa.Table.from_pydict(cols, schema=schema))
    return folder


def split_sample(root: Path, out: Path) -> None:
    """The split stage's import (:func:`curll.split.imported.imported_files`) of the folders under
    ``root``, writing under ``out``; 200 records per stage and type of each split."""
    from curll.config import load_params
    from curll.split.imported import imported_files

    p = load_params().split
    paths = {k: str(out / f"{k}.parquet") for k in ("ratings", "units", "records", "rejects")}
    paths["stats"] = str(out / "stats.json")  # every output under ``out``, none in the repository
    imported = p.imported.model_copy(update={"dir": str(root), "train": 200, "validation": 200, "test": 200})
    split = p.model_copy(update={"imported": imported, "out": p.out.model_copy(update=paths)})
    imported_files(split, stages=[3], types=["cqa"])


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--split-sample", nargs=2, type=Path, metavar=("ROOT", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.split_sample:
        split_sample(*args.split_sample)
        return []
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sizes = {"N/4": args.rows // 4, "N": args.rows}
        folders = {label: write_eval_repo(work / label.replace("/", "_"), n) for label, n in sizes.items()}
        for label, folder in folders.items():
            out = work / f"out_{label.replace('/', '_')}"
            cmd = [
                sys.executable,
                "-m",
                "pipeline.tools.cli",
                "release",
                "import",
                "--out",
                str(out),
                str(folder),
            ]
            wall, rss, failed = measured(cmd, cwd=Path.cwd())
            results.append({"run": f"import, {sizes[label]:,} rows", "wall_s": round(wall, 1),
                            "peak_rss_gib": round(rss, 3), "failed": failed})  # fmt: skip
        write_repo(work / "N", "stage3_cqa", "cqa", {"train": rows("cqa", 3, 100)})
        sample = ["--split-sample", str(work / "N"), str(work / "s")]
        wall, rss, failed = measured([sys.executable, "-m", "bench.release_import", *sample], cwd=Path.cwd())
        label = f"split's sample (200 test records), {args.rows:,} rows"
        results.append({"run": label, "wall_s": round(wall, 1), "peak_rss_gib": round(rss, 3),
                        "failed": failed})  # fmt: skip
        data = next(folders["N"].glob("data/*.parquet"))
        code = f"import pandas as pd; pd.read_parquet({str(data)!r})"
        wall, rss, failed = measured([sys.executable, "-c", code], cwd=Path.cwd())
        results.append({"run": f"baseline: pandas.read_parquet, {args.rows:,} rows", "wall_s": round(wall, 1),
                        "peak_rss_gib": round(rss, 3), "failed": failed})  # fmt: skip
        size = data.stat().st_size / 2**20
    for row in results:
        print(json.dumps(row))
    print(f"\nN-row file: {size:.0f} MiB on disk\n\n| run | wall (s) | peak RSS (GiB) |\n|---|---|---|")
    for row in results:
        print(f"| {row['run']} | {row['wall_s']} | {row['peak_rss_gib']} |")
    return results


if __name__ == "__main__":
    main()
