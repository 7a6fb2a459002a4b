"""Figures as PNG files (matplotlib, headless): heatmaps like the paper's Fig. 1, difference maps
like Fig. 5, out-degree against forgetting like Fig. 6. Each drawing function writes ``path``
atomically and returns it.

Colour scales are the caller's: figures meant to be compared (one family, every order) get the
same ``scale`` (:func:`shared_scale`), so one colour means one value in all of them. A cell's
text is black or white, whichever contrasts more with the colour the cell is drawn in
(:func:`text_colour`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from curll.artifacts import atomic_path
from curll.evaluate.headline import two

#: relative luminance above which black text contrasts more than white: (1 + 0.05) / (L + 0.05)
#: equals (L + 0.05) / (0 + 0.05) at L = sqrt(1.05 * 0.05) - 0.05 (WCAG contrast ratios)
DARK_TEXT_ABOVE = (1.05 * 0.05) ** 0.5 - 0.05

#: typography of the figures' text: an empty cell, a minus sign, Spearman's rho
DASH, MINUS, RHO = "\u2013", "\u2212", "\u03c1"


def luminance(rgba: Sequence[float]) -> float:
    """Relative luminance (WCAG, sRGB) of a colour given as RGB(A) in [0, 1]."""

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(float(c)) for c in rgba[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def text_colour(rgba: Sequence[float]) -> str:
    """The text colour, black or white, that contrasts more with a cell of colour ``rgba``."""
    return "black" if luminance(rgba) > DARK_TEXT_ABOVE else "white"


def shared_scale(frames: Iterable[pd.DataFrame], *, symmetric: bool = False) -> tuple[float, float]:
    """(vmin, vmax) over every finite value of ``frames``; ``symmetric``: (-m, m), m the largest
    absolute value. A scale of no width is widened so that a colour map can still be drawn."""
    values = np.concatenate([f.to_numpy(dtype=float).ravel() for f in frames] or [np.array([])])
    values = values[np.isfinite(values)]
    if not len(values):
        return (-1.0, 1.0)
    if symmetric:
        m = max(1e-9, float(np.abs(values).max()))
        return (-m, m)
    lo, hi = float(values.min()), float(values.max())
    return (lo, hi) if hi > lo else (lo - 0.5, hi + 0.5)


def _figure(width: float, height: float) -> tuple[Any, Any, Any]:
    """(pyplot, figure, axes) on the headless Agg backend; size in inches."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height))
    return plt, fig, ax


def heatmap(
    j: pd.DataFrame,
    title: str,
    path: Path,
    *,
    scale: tuple[float, float] | None = None,
    diverging: bool = False,
    n: pd.DataFrame | None = None,
    lo: pd.DataFrame | None = None,
    hi: pd.DataFrame | None = None,
    reverse: bool = False,
    label: str = "",
) -> Path:
    """Rows: models by trained_to; columns: test stages; cells annotated with their value and,
    with ``lo`` and ``hi`` (same layout), its 95% interval, and with ``n``, the number of values
    behind it (an empty cell shows ``n=0``). ``scale``: (vmin, vmax) of the colours (None: this
    matrix's own, symmetric when ``diverging``); ``diverging``: a red-white-blue map for signed
    values; ``reverse``: the colour scale reversed, for values where lower is better (losses);
    ``label``: the colour bar's."""
    import matplotlib

    values = j.to_numpy(dtype=float)
    rows, cols = values.shape
    wide = lo is not None
    plt, fig, ax = _figure(1.9 + (1.15 if wide else 0.75) * cols, 1.5 + (0.85 if wide else 0.55) * rows)
    vmin, vmax = scale or shared_scale([j], symmetric=diverging)
    cmap = matplotlib.colormaps["RdBu" if diverging else "viridis_r" if reverse else "viridis"]
    im = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(cols), [str(c) for c in j.columns])
    ax.set_yticks(range(rows), [str(i) for i in j.index])
    ax.set_xlabel("test stage")
    ax.set_ylabel("trained up to stage")
    ax.set_title(title, fontsize=10)
    counts = None if n is None else n.reindex(index=j.index, columns=j.columns).fillna(0).to_numpy(dtype=int)
    low = None if lo is None else lo.reindex(index=j.index, columns=j.columns).to_numpy(dtype=float)
    high = None if hi is None else hi.reindex(index=j.index, columns=j.columns).to_numpy(dtype=float)
    for r in range(rows):
        for c in range(cols):
            v = values[r, c]
            lines = [DASH if np.isnan(v) else two(v)]
            if low is not None and high is not None and not (np.isnan(low[r, c]) or np.isnan(high[r, c])):
                lines.append(f"[{two(low[r, c])}, {two(high[r, c])}]")
            if counts is not None:
                lines.append(f"n={counts[r, c]}")
            colour = "black" if np.isnan(v) else text_colour(cmap(im.norm(v)))
            ax.text(c, r, "\n".join(lines), ha="center", va="center", color=colour, fontsize=8)
    bar = fig.colorbar(im, ax=ax)
    if label:
        bar.set_label(label)
    return _save(plt, fig, path)


#: the widest sideways spread of the points at one x (:func:`spread`), in units of x
SPREAD = 0.3


def spread(x: pd.Series) -> np.ndarray:
    """An integer ``x`` with the k points at each value moved sideways to k evenly spaced
    positions within +-``SPREAD``/2 of it (in their order; a lone point stays put), so that
    points of equal x and y do not sit on one another, each still nearer its own x than any
    other integer; any other ``x`` as it is (its values need not be a whole unit apart)."""
    if not pd.api.types.is_integer_dtype(x):
        return x.to_numpy(dtype=float)
    out = x.to_numpy(dtype=float).copy()
    for value in np.unique(out):
        at = np.flatnonzero(out == value)
        if len(at) > 1:
            out[at] = value + np.linspace(-SPREAD / 2, SPREAD / 2, len(at))
    return out


def scatter(
    x: pd.Series, y: pd.Series, title: str, path: Path, *, xlabel: str = "", ylabel: str = ""
) -> Path:
    """``y`` against ``x``, the points at one x spread sideways (:func:`spread`); integer ticks
    on an integer ``x``; axes labelled by the series' names unless ``xlabel`` / ``ylabel`` say
    otherwise."""
    from matplotlib.ticker import MaxNLocator

    plt, fig, ax = _figure(5.6, 4.2)
    ax.scatter(spread(x), y, alpha=0.6)
    if pd.api.types.is_integer_dtype(x):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel or str(x.name))
    ax.set_ylabel(ylabel or str(y.name))
    ax.set_title(title, fontsize=10)
    return _save(plt, fig, path)


def _save(plt: Any, fig: Any, path: Path) -> Path:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
