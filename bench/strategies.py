"""The continual-learning strategies side by side on one slice's split records.

Trains ``--orders`` (default: continual, every strategy of :mod:`curll.orders`, joint) for
``--seeds`` with the default params (``--set key=value`` overrides, e.g. ``train.budget=steps``
or ``train.strategies.ewc=10000``), scores every model's loss on the test split
(``evaluate_loss``), and prints one Markdown row per order: the last model's mean NLL per answer
token, forgetting (``FGT_nll_rise``: > 0, older stages' loss rose above its best) and backward
transfer (``BWT_nll_fall``: > 0, later stages lowered older stages' loss), each with its 95%
interval over the records of ``--split`` (test; validation to choose a setting such as EWC's
lambda) and seeds (:mod:`curll.evaluate.intervals`), the paired difference of mean NLL,
continual's minus the order's (> 0: the order's loss is lower than continual's) with its
Holm-adjusted p over the orders compared (the family of this table), the optimizer steps and
the seconds the trainer spent on the order's models (its own clock: packing, saving and EWC's
Fisher passes are not in it). The tokenizer is trained once for all orders.

Usage: python -m bench.strategies --records data/split/records.parquet [--seeds 42 43 44]
       [--orders continual continual-replay ...] [--set train.budget=steps] [--samples 2000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from bench.settings import candidate_params, loss_bounds, yaml_value
from curll.evaluate.intervals import holm
from curll.yamlio import load_yaml

DEFAULT = (
    "continual",
    "continual-replay",
    "continual-rewarm",
    "continual-ewc",
    "continual-replay-rewarm",
    "joint",
)


def _span(iv: Any) -> str:
    if iv is None or iv.value is None:
        return "-"
    if iv.lo is None or iv.hi is None:
        return f"{iv.value:+.3f}"
    return f"{iv.value:+.3f} [{iv.lo:+.3f}, {iv.hi:+.3f}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=Path, required=True)
    ap.add_argument("--orders", nargs="+", default=list(DEFAULT))
    ap.add_argument("--seeds", type=int, nargs="+", default=[42, 43, 44])
    ap.add_argument("--set", nargs="*", default=[], help="params overrides, key=value")
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--split", choices=["test", "validation"], default="test",
                    help="the records scored: choose a setting (EWC's lambda) on validation")  # fmt: skip
    args = ap.parse_args()
    from pipeline import evaluate_loss, tokenizer, train

    base = load_yaml("params.yaml")
    overrides = {k: yaml_value(v) for k, _, v in (s.partition("=") for s in args.set)}
    overrides["train.order"] = args.orders
    with tempfile.TemporaryDirectory() as tmp:
        params = candidate_params(base, overrides, args.records.resolve(), Path(tmp), args.seeds)
        tokenizer.run(params)
        train.run(params)
        evaluate_loss.run(params)
        found = loss_bounds(pd.read_parquet(params.evaluate.out.losses), args.samples, args.split)
        runs = json.loads(Path(params.train.out.metrics).read_text())["runs"]
    diffs = {o: found.get(f"diff/continual-{o}/all/mean_nll") for o in args.orders}
    adjusted = holm({o: iv.p for o, iv in diffs.items() if iv is not None and iv.p is not None})
    print("| order | mean NLL | FGT (loss) | BWT (loss) | continual minus it | Holm p | steps | train s |")
    print("|---|---|---|---|---|---|---|---|")
    for order in args.orders:
        mine = [r for name, r in runs.items() if name.split("/")[1] == order]
        seconds = sum(r["tokens"] / r["tokens_per_s"] for r in mine if r["tokens_per_s"])
        steps = sum(r["steps"] for r in mine)
        cells = [_span(found.get(f"{order}/all/{m}")) for m in ("mean_nll", "FGT_nll_rise", "BWT_nll_fall")]
        p = f"{adjusted[order]:.3g}" if order in adjusted else "-"
        row = [order, *cells, _span(diffs[order]), p, str(steps), f"{seconds:.0f}"]
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
