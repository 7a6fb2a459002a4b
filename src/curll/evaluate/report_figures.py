"""The report's figures, family by family, each with its caption (what a colour and a sign mean).

A family (:data:`FAMILIES`) is one kind of figure drawn for every order; all of its figures share
one colour scale, computed here where they are drawn: summed judge scores the rating range
(:data:`RATING` times the number of types), losses the smallest to the largest value of any
order, gains over the unigram baseline one limit symmetric about 0. A difference map (an upper
bound minus a sequential order, joint - continual; its own symmetric limit) states its sign in
its title and caption and shows the paired interval; the forgetting scatter of a sequential
order gives Spearman's rho and n, or, with fewer than
:data:`MIN_DEGREES` distinct out-degrees, says that no trend can be read. Every heatmap cell
shows its value, its 95% interval where there is one and its n. Each function draws its figures
and returns figure name -> (PNG path, caption).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from curll.evaluate import plots
from curll.evaluate.headline import two
from curll.evaluate.plots import MINUS, RHO

#: the judge's rating scale (:func:`curll.evaluate.judge.judge_schema`: 1-5)
RATING = (1.0, 5.0)

#: the out-degrees a trend needs: with fewer distinct values, no correlation is shown
MIN_DEGREES = 3
#: said wherever judge scores are shown while the panel failed its controls
NO_CLAIM = "The judge panel failed its controls: these scores support no claim."

#: figure family (a name's part after "<order>: ", or the whole name) -> its section heading
FAMILIES = {
    "summed scores": "Judge scores, summed over types (one colour scale for every order: the rating range)",
    "loss": "Loss per answer token (one colour scale for every order)",
    "gain over unigram": "Gain over the unigram baseline (one colour scale, symmetric about 0)",
    "forgetting vs out-degree": "Forgetting against out-degree",
}


def heading(family: str) -> str:
    """The section heading of a figure family: :data:`FAMILIES`', or for a difference map
    ``<a> - <b>``: "A minus b (paired, cell by cell)"."""
    a, sep, b = family.partition(" - ")
    if family not in FAMILIES and sep:
        return f"{a.capitalize()} minus {b} (paired, cell by cell)"
    return FAMILIES.get(family, family)


Figure = tuple[Path, str]


@dataclass(frozen=True)
class Cells:
    """A matrix, its counts and its interval matrices (None without a bootstrap)."""

    values: pd.DataFrame
    n: pd.DataFrame
    lo: pd.DataFrame | None = None
    hi: pd.DataFrame | None = None


def _interval(c: Cells) -> str:
    return "mean [95% interval]" if c.lo is not None else "mean"


def seeds_said(seeds: Sequence[int]) -> str:
    """Whose answers the judge scored: "the models of seed 42" / "of seeds 42, 43"."""
    return f"the models of seed{'s' if len(seeds) != 1 else ''} {', '.join(map(str, seeds))}"


def judge_sums(
    sums: dict[str, Cells], kinds: list[str], figs: Path, *, informative: bool = True,
    seeds: Sequence[int] = (),
) -> dict[str, Figure]:  # fmt: skip
    """Each order's matrix of judge scores summed over ``kinds``, on the scale of the sum; the
    caption names the judged ``seeds`` when given."""
    scale = (RATING[0] * len(kinds), RATING[1] * len(kinds))
    warn = "" if informative else f" {NO_CLAIM}"
    whose = f" Answers of {seeds_said(seeds)}." if seeds else ""
    out: dict[str, Figure] = {}
    for order, c in sums.items():
        path = plots.heatmap(c.values, f"{order}: summed judge score ({' + '.join(kinds)})",
                             figs / f"heatmap_{order}.png", scale=scale, n=c.n, lo=c.lo, hi=c.hi,
                             label="summed judge score (higher is better)")  # fmt: skip
        out[f"{order}: summed scores"] = (path, (
            f"{order}: judge scores summed over {', '.join(kinds)} (each rated {RATING[0]:g}-{RATING[1]:g}); "
            f"higher is better. Cells: {_interval(c)}, n = scores per cell (fewest of any type). Colour "
            f"scale {scale[0]:g}-{scale[1]:g} for every order.{whose}{warn}"))  # fmt: skip
    return out


def loss_maps(loss: dict[str, Cells], gain: dict[str, Cells], figs: Path) -> dict[str, Figure]:
    """Each order's loss matrix (all types) and its gain over the unigram baseline."""
    low, high = plots.shared_scale(c.values for c in loss.values())
    out: dict[str, Figure] = {}
    for order, c in loss.items():
        path = plots.heatmap(c.values, f"{order}: NLL per answer token (all types)",
                             figs / f"loss_heatmap_{order}.png", scale=(low, high), reverse=True,
                             n=c.n, lo=c.lo, hi=c.hi, label="nats per answer token (lower: better)",
                             )  # fmt: skip
        out[f"{order}: loss"] = (path, (
            f"{order}: loss in nats per answer token, all types; lower is better. Cells: {_interval(c)}, "
            f"n = records x seeds. Colour scale {low:.2f}-{high:.2f} for every order."))  # fmt: skip
    _, lim = plots.shared_scale((c.values for c in gain.values()), symmetric=True)
    for order, c in gain.items():
        path = plots.heatmap(c.values, f"{order}: unigram NLL {MINUS} model NLL (> 0: model better)",
                             figs / f"loss_gain_{order}.png", scale=(-lim, lim), diverging=True,
                             n=c.n, lo=c.lo, hi=c.hi, label="nats per answer token")  # fmt: skip
        out[f"{order}: gain over unigram"] = (path, (
            f"{order}: the unigram baseline's loss minus the model's, nats per answer token; > 0 (blue): "
            f"the model's loss is lower (better), < 0 (red): the baseline's. Cells: {_interval(c)}, "
            f"n = records x seeds. Colour scale ±{lim:.2f} for every order."))  # fmt: skip
    return out


def difference(c: Cells, a: str, b: str, figs: Path, *, informative: bool = True) -> dict[str, Figure]:
    """Order ``a``'s summed judge scores minus order ``b``'s (joint minus continual), cell by
    cell, with the paired interval; the caption says when the judge panel failed its controls
    (``informative`` false), and that a cell's interval is not a tested claim."""
    _, lim = plots.shared_scale([c.values], symmetric=True)
    title = f"{a} {MINUS} {b}, summed judge score\n> 0 (blue): {a} rated higher"
    path = plots.heatmap(c.values, title, figs / f"{a}_minus_{b}.png", scale=(-lim, lim),
                         diverging=True, n=c.n, lo=c.lo, hi=c.hi,
                         label=f"{a} {MINUS} {b} (> 0: {a} better)")  # fmt: skip
    paired = "difference [95% paired interval: both orders on the same bootstrap draws]"
    return {f"{a} - {b}": (path, (
        f"{a.capitalize()} minus {b}: the {a} model's summed judge score minus the {b} model's "
        f"(same stage trained up to, same test stage). Sign: > 0 (blue) = {a} rated higher (better); "
        f"< 0 (red) = {b} rated higher. Cells: {paired if c.lo is not None else 'difference'}, "
        f"n = the fewer of the two orders' scores. Colour scale ±{lim:.2f}." + (
            " A cell with no interval is one that no redraw moves (both models answered every item "
            "alike, as when the two orders train the same first model) or that some redraw leaves "
            f"undefined. Each cell's interval is its own, unadjusted for the {c.values.size} cells: a "
            "description, not a tested claim." if c.lo is not None else "")
        + ("" if informative else f" {NO_CLAIM}")))}  # fmt: skip


def degree(
    fd: pd.DataFrame, rho: float | None, order: str, figs: Path, *, informative: bool = True
) -> dict[str, Figure]:
    """A sequential ``order``'s forgetting of the judge score per indicator against its
    out-degree; Spearman's rho and n in the title, or, with fewer than :data:`MIN_DEGREES`
    distinct out-degrees, the sentence saying that no trend can be read; the caption says when
    the judge panel failed its controls (``informative`` false)."""
    n, distinct = len(fd), int(fd["out_degree"].nunique())
    if distinct < MIN_DEGREES:
        top = fd["out_degree"].value_counts()
        most = f"{int(top.iloc[0])} of {n} at {int(top.index[0])}" if n else "no indicator"
        said = (f"only {distinct} distinct out-degree{'s' if distinct != 1 else ''} ({most}): "
                f"too few for a trend, no correlation shown")  # fmt: skip
    else:
        said = f"Spearman {RHO} " + (f"= {two(rho)}" if rho is not None else "undefined (FGT all equal)")
    title = f"{order}: forgetting per indicator (n = {n})\n{said}"
    path = plots.scatter(fd["out_degree"], fd["FGT"], title, figs / "forgetting_vs_out_degree.png",
                         xlabel="out-degree (edges into later stages)",
                         ylabel="forgetting (FGT, judge rating points)",
                         )  # fmt: skip
    return {"forgetting vs out-degree": (path, (
        f"{order.capitalize()}: forgetting (FGT at the last stage, in judge rating points) of each of "
        f"the {n} indicators with a defined forgetting, against its out-degree (prerequisite edges "
        f"into later stages): {said}. Points at one out-degree are spread sideways so that equal "
        f"points do not sit on one another." + ("" if informative else f" {NO_CLAIM}")))}  # fmt: skip
