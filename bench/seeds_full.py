"""Seeds in full mode (the paper's word x template cross product) at the paper's size, in
bounded memory: the authors' taxonomy (stages 0-4, 1,343 indicators; a synthetic one of that
size when ../shared/reference is absent), the Kuperman norms capped at 1,000 words a stage (the
built-in list when absent), and ``--templates`` synthetic formats per indicator and kind (the
paper asks for 15-20). Reports rows, wall time, rows/s, peak RSS and the file's size.

Usage: python -m bench.seeds_full [--templates 15] [--chunk 250000] [--out PATH]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import pandas as pd

from bench.skill_graph_calls import reference_taxonomy, synthetic_taxonomy
from curll.config import load_params
from curll.schemas import SeedSchema
from curll.seeds import Tally, stream_seeds, stream_stats
from curll.streaming import write_table_stream
from curll.vocab import import_vocab

ROOT = Path(__file__).resolve().parents[1]
NORMS = ROOT.parent / "shared" / "reference" / "aoa" / "AoA_51715_words.csv"


def templates(ind: pd.DataFrame, per_kind: int) -> pd.DataFrame:
    kinds = ("context", "instruction")
    rows = [{"indicator_id": i, "kind": kind, "template": f"{kind} format {j}"}
            for i in ind["indicator_id"] for kind in kinds for j in range(per_kind)]  # fmt: skip
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--templates", type=int, default=15, help="formats per indicator and kind")
    ap.add_argument("--chunk", type=int, default=250_000, help="rows per row group")
    ap.add_argument("--out", type=Path, default=None, help="where to write (default: a temp folder)")
    args = ap.parse_args()
    ind = reference_taxonomy()
    ind = ind if ind is not None else synthetic_taxonomy()
    if NORMS.is_file():
        words = import_vocab("kuperman", NORMS, stages=range(5), max_per_stage=1000, seed=42)
    else:
        words = import_vocab("curll-words", ROOT / "src/curll/resources/vocab_builtin.csv")
    p = load_params(ROOT / "params.yaml").seeds.model_copy(update={"mode": "full"})
    tmpl = templates(ind, args.templates)
    print(f"{len(ind):,} indicators, {len(words):,} words "
          f"({words.groupby('stage').size().to_dict()}), {len(tmpl):,} templates", flush=True)  # fmt: skip
    before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "seeds.parquet"
        tally = Tally()
        start = time.perf_counter()
        n = write_table_stream(stream_seeds(ind, words, tmpl, p, chunk_rows=args.chunk, tally=tally),
                               out, SeedSchema)  # fmt: skip
        wall = time.perf_counter() - start
        size = out.stat().st_size
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    stats = stream_stats(ind, tally)
    print(
        f"rows {n:,} in {wall:.0f} s ({n / wall:,.0f} rows/s); file {size / 2**30:.2f} GiB; "
        f"peak RSS {peak_kb / 2**20:.2f} GiB (inputs loaded: {before_kb / 2**20:.2f} GiB)"
    )
    per_stage: dict[str, int] = {}
    for key, count in stats["per_stage_type"].items():
        stage = key.split("/")[0]
        per_stage[stage] = per_stage.get(stage, 0) + count
    print("seeds per stage:", {k: f"{v:,}" for k, v in sorted(per_stage.items())})


if __name__ == "__main__":
    main()
