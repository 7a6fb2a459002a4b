"""The report's figures: one colour scale per family across orders, n and intervals on every
cell that has them, the joint - continual map's sign convention and paired intervals, and the
forgetting scatter's rho (or why there is none)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from curll.config.llm import MaxChars
from curll.evaluate import plots, report_figures
from curll.evaluate.judge import judge_schema
from curll.evaluate.report import build
from tests.evaluate.test_analysis import losses_of, scores


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, dict[str, Any]], Path]:
    """A report of three orders with losses and a bootstrap; every heatmap call recorded by file name."""
    calls: dict[str, dict[str, Any]] = {}
    draw = plots.heatmap

    def heatmap(j: pd.DataFrame, title: str, path: Path, **kw: Any) -> Path:
        calls[path.name] = {"values": j, "title": title, **kw}
        return draw(j, title, path, **kw)

    s = scores()
    k = s["item_id"].str[-1].astype(int)  # items differ, joint's more: the paired difference moves
    s = s.assign(score=s["score"] + k * 0.5 + k.where(s["order"] == "joint", 0) * 0.25)
    items = s[s["run"] == "continual/0"][["item_id", "stage"]].assign(reference="A cat sat on the mat.")
    degree = pd.Series(0, index=s["indicator_id"].unique())  # every out-degree 0
    out = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plots, "heatmap", heatmap)
        rep = build(s, items, degree, ["ir", "cqa"], out / "m", out / "p", losses=losses_of(s),
                    samples=30, seed=1, judge_informative=False)  # fmt: skip
    return rep, calls, out / "m"


def test_each_family_shares_one_colour_scale_across_orders(built):
    _, calls, _ = built
    orders = ("independent", "joint", "continual")
    judge = {calls[f"heatmap_{o}.png"]["scale"] for o in orders}
    assert judge == {(2.0, 10.0)}  # two types, each rated 1-5
    loss = [calls[f"loss_heatmap_{o}.png"] for o in orders]
    assert len({c["scale"] for c in loss}) == 1
    low, high = loss[0]["scale"]
    every = pd.concat([c["values"] for c in loss]).to_numpy()
    assert low == pytest.approx(every.min()) and high == pytest.approx(every.max()) and low < high
    gain = [calls[f"loss_gain_{o}.png"] for o in orders]
    assert len({c["scale"] for c in gain}) == 1
    lo, hi = gain[0]["scale"]
    assert lo == -hi and hi == pytest.approx(abs(pd.concat([c["values"] for c in gain]).to_numpy()).max())


def test_every_heatmap_cell_has_its_n_and_interval(built):
    _, calls, _ = built
    assert len(calls) == 10  # 3 orders x (judge, loss, gain) and the difference map
    for name, c in calls.items():
        assert c["n"] is not None and c["lo"] is not None and c["hi"] is not None, name
        assert c["lo"].notna().to_numpy().any(), name


def test_the_difference_map_states_its_sign_and_shows_the_paired_interval(built):
    rep, calls, m = built
    caption = rep.captions["joint - continual"]
    assert "> 0 (blue) = joint rated higher (better)" in caption and "paired interval" in caption
    c = calls["joint_minus_continual.png"]
    assert "> 0" in c["title"] and "joint rated higher" in c["title"]
    assert c["scale"][0] == -c["scale"][1]
    diff = pd.read_csv(m / "joint_minus_continual_sum.csv", index_col=0)
    lo = pd.read_csv(m / "joint_minus_continual_sum_lo.csv", index_col=0)
    hi = pd.read_csv(m / "joint_minus_continual_sum_hi.csv", index_col=0)
    moved = lo.notna().to_numpy()
    assert moved.any() and ((lo <= diff) & (diff <= hi)).to_numpy()[moved].all()
    n = pd.read_csv(m / "joint_minus_continual_sum_n.csv", index_col=0)
    assert (n.to_numpy() == 2).all()


def test_forgetting_scatter_says_there_are_too_few_degrees_for_a_trend(built):
    rep, _, _ = built
    caption = rep.captions["forgetting vs out-degree"]
    assert "only 1 distinct out-degree" in caption and "no correlation" in caption
    assert plots.RHO not in caption and rep.figures["forgetting vs out-degree"].is_file()


def test_forgetting_scatter_shows_rho_and_n_in_its_title(tmp_path, monkeypatch):
    titles: list[str] = []
    draw = plots.scatter

    def scatter(x: pd.Series, y: pd.Series, title: str, path: Path, **kw: str) -> Path:
        titles.append(title)
        return draw(x, y, title, path, **kw)

    monkeypatch.setattr(plots, "scatter", scatter)
    fd = pd.DataFrame({"out_degree": [0, 0, 1, 2, 3], "FGT": [1.0, 0.5, 0.4, 0.2, 0.1]})
    got = report_figures.degree(fd, -0.97, "continual", tmp_path)
    assert titles[0].endswith(f"(n = 5)\nSpearman {plots.RHO} = -0.97")
    assert f"Spearman {plots.RHO} = -0.97" in got["forgetting vs out-degree"][1]
    report_figures.degree(fd.iloc[:2].assign(out_degree=[0, 1]), 1.0, "continual", tmp_path)
    assert "only 2 distinct out-degrees (1 of 2 at" in titles[1] and plots.RHO not in titles[1]
    report_figures.degree(fd, -0.0032, "continual", tmp_path)  # rounds to zero: 0.00, not -0.00
    assert titles[2].endswith(f"Spearman {plots.RHO} = 0.00")


def test_the_rating_range_is_the_judge_schemas():
    enum = judge_schema(MaxChars(long=1000, short=100), explain=False)["properties"]["rating"]["enum"]
    assert (min(enum), max(enum)) == report_figures.RATING


def test_points_at_one_out_degree_are_spread_so_none_hides_another():
    x = pd.Series([0, 0, 0, 1, 2, 2], dtype="int64")
    got = plots.spread(x)
    assert len(set(got)) == len(got)  # no two points at one place
    assert got[3] == 1.0  # a lone point stays put
    assert list(got[:3]) == pytest.approx([-plots.SPREAD / 2, 0.0, plots.SPREAD / 2])
    assert (abs(got - x.to_numpy()) < 0.5).all()  # nearer its own x than any other integer
    floats = pd.Series([0.5, 0.5, 0.6])
    assert list(plots.spread(floats)) == [0.5, 0.5, 0.6]  # not a whole unit apart: left as they are


def test_the_forgetting_scatter_says_its_unit_and_when_the_judge_failed(tmp_path):
    fd = pd.DataFrame({"out_degree": [0, 0, 1], "FGT": [1.0, 0.5, 0.4]})
    failed = report_figures.degree(fd, None, "continual", tmp_path, informative=False)
    passed = report_figures.degree(fd, None, "continual", tmp_path)
    assert report_figures.NO_CLAIM in failed["forgetting vs out-degree"][1]
    assert report_figures.NO_CLAIM not in passed["forgetting vs out-degree"][1]
    assert "judge rating points" in passed["forgetting vs out-degree"][1]
