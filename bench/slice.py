"""The data stages on a fixed slice with a real model: what survives, why the rest does not, how long.

Copies the project's params, prompts and code into a scratch folder, applies ``--set``
overrides, and runs ``curll <stage> run`` for taxonomy .. verify (or ``--until``), each
timed. Then it prints, from the stages' own outputs:

- per stage and type: requests / instances in, kept, yield, and the top reject reasons;
- content-check rates (seed word, on topic, grounded, degenerate) per stage and type;
- passage length (words: min / median / max) and mean Flesch-Kincaid grade per stage.

``--prompts DIR`` swaps the prompt folder, so two prompt sets are compared on the same
slice (same seeds, same model, fresh request cache each run)::

    python -m bench.slice --out before.json --prompts /tmp/old-prompts
    python -m bench.slice --out after.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from bench.settings import yaml_value
from curll.yamlio import dump_yaml, load_yaml

ROOT = Path(__file__).resolve().parents[1]
STAGES = ["taxonomy", "vocab", "llm_models", "templates", "seeds", "generate", "generate_merge",
          "verify_encoder", "verify"]  # fmt: skip


def _set(params: dict[str, Any], assignment: str) -> None:
    key, _, value = assignment.partition("=")
    *path, last = key.split(".")
    node = params
    for part in path:
        node = node[part]
    node[last] = yaml_value(value)


def run_slice(work: Path, prompts: Path | None, sets: list[str], until: str) -> dict[str, float]:
    for name in ("src", "pipeline", "prompts", "params.yaml"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, work / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, work / name)
    if prompts is not None:
        shutil.rmtree(work / "prompts")
        shutil.copytree(prompts, work / "prompts")
    params = load_yaml(work / "params.yaml")
    for s in sets:
        _set(params, s)
    dump_yaml(params, work / "params.yaml")
    times = {}
    for stage in STAGES[: STAGES.index(until) + 1]:
        t0 = time.perf_counter()
        item = ["--profile", params["llm"]["use"]] if stage == "llm_models" else []  # the one it asks
        proc = subprocess.run([sys.executable, "-m", "pipeline.tools.cli", stage, "run", *item], cwd=work,
                              capture_output=True, text=True)  # fmt: skip
        times[stage] = round(time.perf_counter() - t0, 1)
        print(f"{stage}: {times[stage]} s  {proc.stdout.strip().splitlines()[-1:] if proc.stdout else ''}")
        if proc.returncode != 0:
            print(proc.stderr[-3000:])
            times[f"{stage} (failed)"] = proc.returncode
            break
    return times


def summarise(work: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    gen = work / "data/generate/stats.json"
    if gen.exists():
        out["generate"] = json.loads(gen.read_text())["requests"]
    tmpl = work / "data/templates/stats.json"
    if tmpl.exists():
        t = json.loads(tmpl.read_text())
        out["templates"] = {
            "requests": t["requests"],
            "reject_reasons": t["reject_reasons"],
            "yields": t["yields"],
        }
    metrics = work / "data/verify/metrics.json"
    if metrics.exists():
        m = json.loads(metrics.read_text())
        out["verify"] = {"counts": m["counts"], "content": m["content"],
                         "fk_grade": {k: {s: v["flesch_kincaid"]["mean"] for s, v in per.items()}
                                      for k, per in m["readability"].items()}}  # fmt: skip
    ctx = work / "data/generate/tables/context.parquet"
    if ctx.exists():
        n = pd.Series([len(str(t).split()) for t in pd.read_parquet(ctx)["text"]])
        out["passage_words"] = {
            "min": int(n.min()),
            "median": float(n.median()),
            "max": int(n.max()),
            "n": len(n),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=Path, help="a prompts folder to use instead of the project's")
    ap.add_argument("--set", action="append", default=[], help="params override, e.g. taxonomy.per_stage=2")
    ap.add_argument("--until", default="verify", choices=STAGES)
    ap.add_argument("--keep", type=Path, help="run in this folder and keep it (default: a temp folder)")
    ap.add_argument("--out", type=Path, help="write the summary as JSON here too")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="curll-slice-"))
    work.mkdir(parents=True, exist_ok=True)
    times = run_slice(work, args.prompts, args.set, args.until)
    report = {"wall_s": times, **summarise(work)}
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text)
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
