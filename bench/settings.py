"""Which training settings let the trained models beat the unigram baseline on their own stage?

For each candidate (a set of params overrides on top of ``params.yaml``), in a folder of its own:
the ``tokenizer``, ``train`` and ``evaluate_loss`` stages on the given split records, then, per
order, the own-stage gain over the unigram baseline (:mod:`curll.evaluate.values`: mean over
stages k of the unigram's NLL minus the model's, on stage k's answers of ``--split``, for the
model trained up to k) with its 95% interval (:mod:`curll.evaluate.intervals`: records within
stage and type, and the seeds), how many of the order's models pass the pipeline's baseline
gate on ``--split`` (:func:`curll.evaluate.findings.baseline_verdict`: each model's gain on its
own stage > 0 with p < 0.05), and the wall time of train + loss. Prints one Markdown table row
per candidate, the layout of docs/benchmarks.md. The default split is validation: settings
chosen there leave the test split, which the pipeline's claims are tested on, unseen.

Usage: python -m bench.settings --records data/split/records.parquet [--only NAME ...]
       [--seeds 42] [--samples 2000] [--split validation|test]
"""

from __future__ import annotations

import argparse
import copy
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from curll.yamlio import load_yaml


def yaml_value(text: str) -> Any:
    """A command line's ``key=value`` value read as YAML 1.2, as ``params.yaml`` is read
    (:mod:`curll.yamlio`): ``1e-3`` is a number, ``yes`` is text."""
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(text)


#: name -> dotted params overrides
CANDIDATES: dict[str, dict[str, Any]] = {
    "previous default": {"train.init": "kaiming", "train.batch": 8, "train.micro_batch": 8,
                         "train.optim.lr": 0.01, "train.epochs": 3, "tokenizer.vocab_size": 2048},
    "normal, batch 2, lr 3e-3, 6 ep, vocab 512": {
        "train.init": "normal", "train.batch": 2, "train.micro_batch": 2, "train.optim.lr": 0.003,
        "train.epochs": 6, "tokenizer.vocab_size": 512},
    "same + cosine, 10% warm-up": {
        "train.init": "normal", "train.batch": 2, "train.micro_batch": 2, "train.optim.lr": 0.003,
        "train.epochs": 6, "tokenizer.vocab_size": 512, "train.optim.schedule": "cosine",
        "train.optim.warmup": 0.1},
    "same, 10 epochs": {
        "train.init": "normal", "train.batch": 2, "train.micro_batch": 2, "train.optim.lr": 0.003,
        "train.epochs": 10, "tokenizer.vocab_size": 512},
    "same, lr 1e-3": {
        "train.init": "normal", "train.batch": 2, "train.micro_batch": 2, "train.optim.lr": 0.001,
        "train.epochs": 6, "tokenizer.vocab_size": 512},
    "same, budget steps": {
        "train.init": "normal", "train.batch": 2, "train.micro_batch": 2, "train.optim.lr": 0.003,
        "train.epochs": 6, "tokenizer.vocab_size": 512, "train.budget": "steps"},
    "same, vocab 1024": {
        "train.init": "normal", "train.batch": 2, "train.micro_batch": 2, "train.optim.lr": 0.003,
        "train.epochs": 6, "tokenizer.vocab_size": 1024},
}  # fmt: skip


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    *path, last = dotted.split(".")
    for key in path:
        data = data[key]
    data[last] = value


def candidate_params(
    base: dict[str, Any], overrides: dict[str, Any], records: Path, folder: Path, seeds: list[int]
) -> Any:
    from curll.config import parse_params

    data = copy.deepcopy(base)
    for k, v in overrides.items():
        _set(data, k, v)
    _set(data, "train.seeds", seeds)
    _set(data, "split.out.records", str(records))
    for key, name in (("tokenizer.out.dir", "tokenizer"), ("tokenizer.out.stats", "tokenizer.json"),
                      ("train.out.models", "models"), ("train.out.checkpoints", "checkpoints"),
                      ("train.out.metrics", "train.json"), ("train.out.plots", "plots"),
                      ("evaluate.out.losses", "losses.parquet")):  # fmt: skip
        _set(data, key, str(folder / name))
    return parse_params(data, source="params.yaml")


def loss_bounds(losses: pd.DataFrame, samples: int, split: str = "test") -> dict[str, Any]:
    """The loss family's values (all types) on ``split``'s records with their 95% intervals over
    those records and the seeds (:func:`curll.evaluate.intervals.crossed`), seeded with 42.
    Settings are chosen on ``validation``; ``test`` is for the run that reports them."""
    from curll.evaluate.intervals import crossed
    from curll.evaluate.values import loss_values

    rows = losses[losses["split"] == split]
    if rows.empty:
        raise SystemExit(f"no {split} records were scored (evaluate.loss.splits)")
    return crossed(rows, "record_id", samples, 42, lambda r, w: loss_values(r, w, ["all"]))


ORDERS = ("independent", "joint", "continual")


def gate(losses: pd.DataFrame, samples: int, split: str = "validation") -> dict[str, dict[str, Any]]:
    """Per order, as the pipeline's gate reports it (:func:`baseline_verdict`'s ``orders``): the
    mean own-stage gain with its interval, its ``models`` and how many are ``beating``."""
    from curll.evaluate.findings import baseline_verdict

    return dict(baseline_verdict(loss_bounds(losses, samples, split))["orders"])


def row(name: str, wall: float, orders: dict[str, dict[str, Any]]) -> str:
    """One Markdown row: each order's gain [lo, hi] and its models beating the baseline, then
    all models beating it."""
    cells = []
    for order in ORDERS:
        o = orders.get(order)
        if o is None or o["gain"] is None:
            cells.append("")
            continue
        bounds = f" [{o['lo']:+.3f}, {o['hi']:+.3f}]" if o["lo"] is not None and o["hi"] is not None else ""
        cells.append(f"{o['gain']:+.3f}{bounds}, {o['beating']}/{o['models']}")
    models, beating = (sum(o[k] for o in orders.values()) for k in ("models", "beating"))
    return f"| {name} | {wall:.0f} | " + " | ".join(cells) + f" | {beating}/{models} |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=Path, required=True)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--seeds", type=int, nargs="+", default=[42])
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--split", choices=["validation", "test"], default="validation",
                    help="the records the gains are measured on (choose settings on validation)")  # fmt: skip
    args = ap.parse_args()
    from pipeline import evaluate_loss, tokenizer, train

    base = load_yaml("params.yaml")
    print("| settings | train + loss (s) | " + " | ".join(f"{o} gain, beating" for o in ORDERS)
          + " | models beating |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for name, overrides in CANDIDATES.items():
        if args.only and name not in args.only:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            params = candidate_params(base, overrides, args.records.resolve(), Path(tmp), args.seeds)
            tokenizer.run(params)
            start = time.perf_counter()
            train.run(params)
            evaluate_loss.run(params)
            wall = time.perf_counter() - start
            got = gate(pd.read_parquet(params.evaluate.out.losses), args.samples, args.split)
        print(row(name, wall, got), flush=True)


if __name__ == "__main__":
    main()
