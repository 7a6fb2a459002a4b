"""Control items: can a judge tell a reference answer from a wrong one?

:func:`control_sample` draws, in every (stage, type) stratum of the asked test items
(``dropped`` empty), ``min(per_type, n)`` of its ``n`` items without replacement, and makes
four controls of each, rated by every judge exactly as a model's answer is:

- ``reference``: the item's reference answer (a judge should rate it high);
- ``mismatch``: the reference of another item of the stratum whose reference is not the
  item's (seeded); with none, of another item of the same type from any stage; with none
  either, the item has no mismatch row;
- ``empty``: the empty answer (the judge rates it: the "no answer" shortcut of
  :func:`curll.evaluate.judge.no_answer` is for a model's rejected output only);
- ``shuffled``: the reference's words (split on white space) in a seeded random order; when the
  draw keeps their order, rotated by one word; none when that is still the reference (one word).

Each stratum draws from its own generator, seeded with (``seed``, stage, CRC-32 of the type),
so a stratum's controls stay as they were when another stratum changes.

:func:`judge_controls` tells per judge whether it prefers the reference. For a comparison
``c`` (mismatch, empty, shuffled) and each item ``i`` whose reference and ``c`` ratings both
parsed: ``win_i = 1`` if ``r_i(reference) > r_i(c)``, ``0.5`` if equal, ``0`` if less, i.e.
``(sign(r_i(reference) - r_i(c)) + 1) / 2``; the value is ``mean_i win_i`` (0.5 in expectation
for a judge that rates at random, 1 for one that always prefers the reference). Its 95% interval
is the percentile bootstrap over items: ``samples`` replicates, each ``n`` items drawn with
replacement (one ``(samples, n)`` index matrix), the 2.5th and 97.5th percentiles of their
means. A judge is informative iff reference-vs-mismatch rests on at least :data:`MIN_ITEMS`
items and an exact one-sided sign test on its untied items rejects "the reference wins half the
time" at :data:`ALPHA` (``P(Binomial(u, 1/2) >= wins) < ALPHA``, u the items without a tie): a
percentile interval over few items passes a judge that rates at random far too often. The
``why`` line of a judge that fails says which other controls it rates above the reference by
the same test the other way (``P(Binomial(u, 1/2) >= losses)``), Holm-adjusted over the
controls with an untied item (all ties: no test is made).
:func:`control_agreement`: per pair of judges, on the control
rows both rated, the share of equal ratings and Spearman's rho.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from curll.evaluate.headline import fmt
from curll.evaluate.intervals import ALPHA, holm
from curll.schemas.evaluate import CONTROLS

#: least items, and level of the sign test, for a judge to count as informative
MIN_ITEMS = 10
#: what the reference is compared with, each a key ``reference_beats_<control>``
COMPARED = ("mismatch", "empty", "shuffled")
SAMPLE_COLUMNS = ["item_id", "stage", "type", "control", "answer"]


def _rng(seed: int, stage: int, kind: str) -> np.random.Generator:
    return np.random.default_rng([seed % 2**32, int(stage), zlib.crc32(kind.encode())])


def _shuffled(text: str, rng: np.random.Generator) -> str:
    words = text.split()
    order = [words[k] for k in rng.permutation(len(words))]
    return " ".join(order[1:] + order[:1] if order == words else order)


def _partner(
    item: pd.Series, stratum: pd.DataFrame, kind: pd.DataFrame, rng: np.random.Generator
) -> str | None:
    """Another item's reference (not the item's own text): from the stratum, else the type."""
    for pool in (stratum, kind):
        others = pool[(pool["item_id"] != item["item_id"]) & (pool["reference"] != item["reference"])]
        if len(others):
            return str(others["reference"].iloc[int(rng.integers(len(others)))])
    return None


def control_sample(items: pd.DataFrame, per_type: int, seed: int) -> pd.DataFrame:
    """The control rows to rate (:data:`SAMPLE_COLUMNS`), one per (sampled item, control):
    at most ``per_type`` items per (stage, type), ordered by stage, type, item and control."""
    asked = items[items["dropped"] == ""] if "dropped" in items else items
    asked = asked.sort_values("item_id", kind="stable")
    rows: list[dict[str, Any]] = []
    for _, stratum in asked.groupby(["stage", "type"], sort=True):
        stage, kind = int(stratum["stage"].iloc[0]), str(stratum["type"].iloc[0])
        rng = _rng(seed, stage, kind)
        same_type = asked[asked["type"] == kind]
        pick = np.sort(rng.choice(len(stratum), size=min(per_type, len(stratum)), replace=False))
        for _, item in stratum.iloc[pick].iterrows():
            ref, shuffled = item["reference"], _shuffled(item["reference"], rng)
            texts = {"reference": ref, "mismatch": _partner(item, stratum, same_type, rng),
                     "empty": "", "shuffled": None if shuffled == ref else shuffled}  # fmt: skip
            rows += [{"item_id": item["item_id"], "stage": stage, "type": kind, "control": c,
                      "answer": texts[c]} for c in CONTROLS if texts[c] is not None]  # fmt: skip
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)


def wins(controls: pd.DataFrame, against: str) -> np.ndarray:
    """Per item with both ratings parsed: 1 if the reference's rating is above ``against``'s,
    0.5 if equal, 0 if below (``controls``: one judge's rows, ``item_id``/``control``/``rating``)."""
    wide = controls.set_index(["item_id", "control"])["rating"].unstack()
    if "reference" not in wide or against not in wide:
        return np.zeros(0)
    both = wide[["reference", against]].dropna()
    diff = both["reference"].to_numpy(dtype=float) - both[against].to_numpy(dtype=float)
    return np.asarray((np.sign(diff) + 1) / 2, dtype=float)


def beats(w: np.ndarray, samples: int, seed: int) -> dict[str, Any]:
    """``{value, lo, hi, n}``: the mean of ``w`` and its 95% percentile-bootstrap interval
    (None with fewer than 2 items or no replicates)."""
    n = len(w)
    value = round(float(w.mean()), 4) if n else None
    if n < 2 or samples < 1:
        return {"value": value, "lo": None, "hi": None, "n": n}
    idx = np.random.default_rng(seed % 2**32).integers(0, n, size=(samples, n))
    lo, hi = np.percentile(w[idx].mean(axis=1), [2.5, 97.5])
    return {"value": value, "lo": round(float(lo), 4), "hi": round(float(hi), 4), "n": n}


def sign_test(w: np.ndarray) -> float:
    """One-sided exact sign test of the untied items of ``w`` (1 win, 0.5 tie, 0 loss):
    P(Binomial(u, 1/2) >= wins); 1.0 without an untied item."""
    from scipy.stats import binom  # type: ignore[import-untyped]

    wins, untied = int((w == 1).sum()), int((w != 0.5).sum())
    return float(binom.sf(wins - 1, untied, 0.5)) if untied else 1.0


#: how the ``why`` line names a control the judge rated above the reference
WORSE = {"mismatch": "another item's answer", "empty": "an empty answer", "shuffled": "a shuffled reference"}


def _why(stats: dict[str, Any], p: float, below: dict[str, float]) -> str:
    """The verdict in one line, from a judge's ``stats``, its sign test's ``p`` and ``below``
    (control -> the one-sided sign test of "the control rated above the reference", p). The
    line of a judge that failed on enough items also names each other control it rated above
    the reference: those whose test rejects at :data:`ALPHA` after Holm's correction over the
    controls tested (the mismatch's share is in the line already)."""
    b = stats["reference_beats_mismatch"]
    if b["n"] < MIN_ITEMS:
        return f"only {b['n']} item(s) with the reference and a mismatch both rated: fewer than {MIN_ITEMS}"
    span = f"{fmt((b['value'], b['lo'], b['hi']))} over {b['n']} items, sign test p {p:.3g}"
    if p < ALPHA:
        return f"prefers the reference to another item's answer: {span}"
    adjusted = holm(below)
    above = ""
    for c in (c for c in COMPARED if adjusted.get(c, 1.0) < ALPHA):
        r = stats[f"reference_beats_{c}"]
        share = fmt((r["value"], r["lo"], r["hi"]))
        above += (f"; rated {WORSE[c]} above the reference: {share}, sign test p {below[c]:.3g}, "
                  f"Holm-adjusted {adjusted[c]:.3g}")  # fmt: skip
    return f"not shown to prefer the reference to another item's answer: {span}{above}"


def judge_controls(
    controls: pd.DataFrame, samples: int, seed: int, judges: Sequence[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Per judge (``judges``, default: those of the rows in order; one without rows has
    nothing to tell, so it is uninformative): ``n_items``, ``ratings``, ``parse_failures``,
    ``means`` (mean parsed rating of each control, None if none parsed), a
    ``reference_beats_<c>`` :func:`beats` for each of :data:`COMPARED`, ``informative`` and
    ``why`` (one line)."""
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(controls["judge"]) if judges is None else judges:
        g = controls[controls["judge"] == name]
        means = g.groupby("control")["rating"].mean()
        stats: dict[str, Any] = {
            "n_items": int(g["item_id"].nunique()), "ratings": len(g),
            "parse_failures": int(g["rating"].isna().sum()),
            "means": {c: None if pd.isna(means.get(c)) else round(float(means[c]), 3) for c in CONTROLS},
        }  # fmt: skip
        for k, c in enumerate(COMPARED):
            stats[f"reference_beats_{c}"] = beats(wins(g, c), samples, seed + k)
        b = stats["reference_beats_mismatch"]
        p = sign_test(wins(g, "mismatch"))
        stats["sign_test_p"] = round(p, 6)
        stats["informative"] = bool(b["n"] >= MIN_ITEMS and p < ALPHA)
        # the reverse test: does the judge rate the control above the reference? (1 - w: its wins)
        others = {c: wins(g, c) for c in COMPARED if c != "mismatch"}
        below = {c: sign_test(1 - w) for c, w in others.items() if (w != 0.5).any()}  # a test made
        stats["why"] = _why(stats, p, below)
        out[str(name)] = stats
    return out


def control_agreement(controls: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per pair of judges ``"a|b"`` (sorted): ``n`` control rows both parsed, ``exact`` (share
    of equal ratings) and ``spearman`` (None with fewer than 2 rows or a constant rating)."""
    from scipy.stats import spearmanr

    wide = controls.pivot_table(
        index=["item_id", "control"], columns="judge", values="rating", aggfunc="first"
    )
    pairs: dict[str, dict[str, Any]] = {}
    for a, b in itertools.combinations(sorted(set(controls["judge"])), 2):
        both = wide[[a, b]].dropna() if {a, b} <= set(wide.columns) else pd.DataFrame(columns=[a, b])
        x, y = both[a].astype(float), both[b].astype(float)
        varied = len(both) >= 2 and x.nunique() > 1 and y.nunique() > 1
        rho = spearmanr(x, y).statistic if varied else np.nan
        pairs[f"{a}|{b}"] = {
            "n": len(both),
            "exact": round(float((x == y).mean()), 4) if len(both) else None,
            "spearman": None if pd.isna(rho) else round(float(rho), 4),
        }
    return pairs
