"""Figures as PNG files (matplotlib, headless): heatmaps like the paper's Fig. 1, difference maps
like Fig. 5, out-degree against forgetting like Fig. 6. Each function writes ``path``
atomically and returns it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from curll.artifacts import atomic_path


def _figure(scale: float = 1.0) -> tuple[Any, Any, Any]:
    """(pyplot, figure, axes) on the headless Agg backend; ``scale``: the size, relative."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2 * scale, 4.2 * scale))
    return plt, fig, ax


def heatmap(
    j: pd.DataFrame,
    title: str,
    path: Path,
    *,
    diverging: bool = False,
    n: pd.DataFrame | None = None,
    lo: pd.DataFrame | None = None,
    hi: pd.DataFrame | None = None,
    reverse: bool = False,
) -> Path:
    """Rows: models by trained_to; columns: test stages; cells annotated with their value and,
    with ``n`` (same layout), the number of scores behind it (an empty cell shows ``n=0``);
    with ``lo`` and ``hi``, its 95% interval; ``reverse``: the colour scale reversed, for values
    where lower is better (losses)."""
    plt, fig, ax = _figure(scale=1.5 if lo is not None else 1.0)
    values = j.to_numpy(dtype=float)
    if diverging:
        lim = max(1e-9, float(abs(pd.DataFrame(values)).max().max()))
        im = ax.imshow(values, cmap="RdBu", vmin=-lim, vmax=lim)
    else:
        im = ax.imshow(values, cmap="viridis_r" if reverse else "viridis")
    ax.set_xticks(range(len(j.columns)), [str(c) for c in j.columns])
    ax.set_yticks(range(len(j.index)), [str(i) for i in j.index])
    ax.set_xlabel("test stage")
    ax.set_ylabel("trained up to stage")
    ax.set_title(title)
    counts = None if n is None else n.reindex(index=j.index, columns=j.columns).fillna(0).to_numpy(dtype=int)
    low = None if lo is None else lo.reindex(index=j.index, columns=j.columns).to_numpy(dtype=float)
    high = None if hi is None else hi.reindex(index=j.index, columns=j.columns).to_numpy(dtype=float)
    for r in range(values.shape[0]):
        for c in range(values.shape[1]):
            label = "" if pd.isna(values[r, c]) else f"{values[r, c]:.2f}"
            if low is not None and high is not None and not pd.isna(low[r, c]):
                label += f"\n[{low[r, c]:.2f}, {high[r, c]:.2f}]"
            if counts is not None:
                label = f"{label}\nn={counts[r, c]}".lstrip("\n")
            color = "black" if diverging or pd.isna(values[r, c]) else "white"
            ax.text(c, r, label, ha="center", va="center", color=color, fontsize=7 if low is not None else 8)
    fig.colorbar(im, ax=ax)
    return _save(plt, fig, path)


def scatter(x: pd.Series, y: pd.Series, title: str, path: Path) -> Path:
    plt, fig, ax = _figure()
    ax.scatter(x, y, alpha=0.7)
    ax.set_xlabel(str(x.name))
    ax.set_ylabel(str(y.name))
    ax.set_title(title)
    return _save(plt, fig, path)


def _save(plt: Any, fig: Any, path: Path) -> Path:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
