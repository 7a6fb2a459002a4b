"""Sentences, made from the numbers, that say which results stand out from their intervals.

Every CL metric but AP is a difference (forgetting, backward and forward transfer): it is an
effect when its 95% interval leaves out 0, and not distinguishable from none when the interval
holds 0. AP is compared across orders: two orders whose AP intervals do not overlap differ
(a conservative reading: intervals that overlap a little may still differ). Nothing here is
written by hand about a result: each sentence follows the values of ``metrics.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: the differences of each family, and how to say their sign (positive first)
DIFFERENCES = {
    "judge": {"FGT": ("forgetting", "scores on earlier stages fell", "scores on earlier stages rose"),
              "BWT": ("backward transfer", "later stages raised earlier scores", "later stages lowered them"),
              "FWT": ("forward transfer", "scores above the independent models", "scores below them"),
              "FWT_zero_shot": ("zero-shot transfer", "scores above the untrained model", "scores below it")},
    "loss": {"FGT_nll_rise": ("forgetting", "the loss on older stages rose", "the loss on older stages fell"),
             "BWT_nll_fall": ("backward transfer", "later stages lowered older ones' loss",
                              "later stages raised older ones' loss"),
             "FWT_nll_fall": ("forward transfer", "loss below the independent models", "loss above them"),
             "FWT_zero_shot_nll_fall": ("zero-shot transfer", "loss below the untrained model",
                                        "loss above the untrained model")},
}  # fmt: skip
LEVEL = {"judge": ("sum", "AP", "judge score, sum of types, higher is better"),
         "loss": ("all", "mean_nll", "NLL per answer token, lower is better")}  # fmt: skip


def findings(metrics: Mapping[str, Any]) -> list[str]:
    """One sentence per final metric with an interval, then one per pair of orders' AP; empty when
    ``metrics`` has no intervals (bootstrap samples 0)."""
    out: list[str] = []
    singles = metrics.get("bootstrap", {}).get("single_item_strata", {})
    for family, strata in singles.items():
        if strata:
            where = ", ".join(strata)
            out.append(f"{family}: {len(strata)} stage/type groups hold one test item ({where}): intervals "
                       "cannot show the uncertainty there (no interval where all are single).")  # fmt: skip
    for family, section in (("judge", metrics.get("orders", {})), ("loss", metrics.get("loss", {}))):
        kind, level, unit = LEVEL[family]
        for order, by_kind in section.items():
            vals = by_kind.get(kind, {})
            for name, (what, up, down) in DIFFERENCES[family].items():
                v, lo, hi = vals.get(name), vals.get(f"{name}_lo"), vals.get(f"{name}_hi")
                if v is None or lo is None or hi is None:
                    continue
                span = f"{v:.3f} [{lo:.3f}, {hi:.3f}]"
                if lo > 0 or hi < 0:
                    out.append(f"{order}, {family}: {what} {span} excludes 0: {up if lo > 0 else down}.")
                else:
                    out.append(f"{order}, {family}: {what} {span} holds 0: not distinguishable from none.")
        orders = [(o, by.get(kind, {})) for o, by in section.items()]
        for i, (a, va) in enumerate(orders):
            for b, vb in orders[i + 1 :]:
                bounds = [va.get(level), va.get(f"{level}_lo"), va.get(f"{level}_hi"),
                          vb.get(level), vb.get(f"{level}_lo"), vb.get(f"{level}_hi")]  # fmt: skip
                if any(x is None for x in bounds):
                    continue
                x, xlo, xhi, y, ylo, yhi = bounds
                apart = xhi < ylo or yhi < xlo
                verdict = "do not overlap: the orders differ" if apart else "overlap: no difference shown"
                out.append(f"{family} {level} ({unit}): {a} {x:.3f} [{xlo:.3f}, {xhi:.3f}] and "
                           f"{b} {y:.3f} [{ylo:.3f}, {yhi:.3f}] {verdict}.")  # fmt: skip
    return out
