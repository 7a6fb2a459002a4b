"""Heatmap cells: text black or white by the luminance of the colour the cell is drawn in, for
every colour map the report uses; the colour scale is the caller's when given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import pytest

from curll.evaluate import plots


def test_text_is_black_on_yellow_and_white_on_navy_for_the_extremes_of_viridis():
    viridis = matplotlib.colormaps["viridis"]
    assert plots.text_colour(viridis(1.0)) == "black"  # yellow
    assert plots.text_colour(viridis(0.0)) == "white"  # dark purple-navy
    assert plots.text_colour((0.0, 0.0, 0.5, 1.0)) == "white"  # navy
    assert plots.text_colour((1.0, 1.0, 0.0, 1.0)) == "black"  # yellow
    rdbu = matplotlib.colormaps["RdBu"]
    assert [plots.text_colour(rdbu(x)) for x in (0.0, 0.5, 1.0)] == ["white", "black", "white"]


def _drawn(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    figs: list[Any] = []

    def keep(plt: Any, fig: Any, path: Path) -> Path:
        figs.append(fig)
        plt.close(fig)
        return path

    monkeypatch.setattr(plots, "_save", keep)
    return figs


@pytest.mark.parametrize("kw", [{}, {"reverse": True}, {"diverging": True}])
def test_every_cell_text_contrasts_with_its_cell_and_the_scale_is_the_callers(monkeypatch, tmp_path, kw):
    figs = _drawn(monkeypatch)
    j = pd.DataFrame([[-4.0, -1.0, 0.0], [1.0, 3.0, np.nan]], index=[0, 1], columns=[0, 1, 2])
    n = pd.DataFrame(2, index=j.index, columns=j.columns)
    lo, hi = j - 1, j + 1
    plots.heatmap(j, "t", tmp_path / "h.png", scale=(-5.0, 5.0), n=n, lo=lo, hi=hi, **kw)
    ax = figs[0].axes[0]
    im = ax.images[0]
    assert (im.norm.vmin, im.norm.vmax) == (-5.0, 5.0)
    texts = {(round(t.get_position()[1]), round(t.get_position()[0])): t for t in ax.texts}
    for (r, c), text in texts.items():
        v = float(j.to_numpy()[r, c])
        if np.isnan(v):
            assert text.get_text().startswith(plots.DASH) and "n=2" in text.get_text()
            continue
        assert text.get_color() == plots.text_colour(im.cmap(im.norm(v)))
        assert f"{v:.2f}" in text.get_text() and f"[{v - 1:.2f}, {v + 1:.2f}]" in text.get_text()
        assert "n=2" in text.get_text()
    # viridis's dark end gets white text, its bright end black
    if not kw:
        assert texts[(0, 0)].get_color() == "white" and texts[(1, 1)].get_color() == "black"


def test_shared_scale_spans_every_frame_and_is_symmetric_when_asked():
    a = pd.DataFrame([[1.0, np.nan], [2.0, 3.0]])
    b = pd.DataFrame([[-0.5, 6.0]])
    assert plots.shared_scale([a, b]) == (-0.5, 6.0)
    assert plots.shared_scale([a, b], symmetric=True) == (-6.0, 6.0)
    assert plots.shared_scale([pd.DataFrame([[2.0]])]) == (1.5, 2.5)  # no width: widened


def test_a_cell_that_rounds_to_zero_reads_0_00_never_minus_0_00(monkeypatch, tmp_path):
    figs = _drawn(monkeypatch)
    j = pd.DataFrame([[-0.0039, 0.5]], index=[1], columns=[0, 1])
    plots.heatmap(j, "t", tmp_path / "h.png", lo=j - 0.001, hi=j + 0.001, diverging=True)
    shown = [t.get_text() for t in figs[0].axes[0].texts]
    assert shown[0].splitlines()[:2] == ["0.00", "[0.00, 0.00]"] and "-0.00" not in " ".join(shown)
