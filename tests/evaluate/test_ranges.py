"""Judge intervals stay within what a score can be: a cell within the 1-5 rating scale, a sum of
two types within 2-10, a change within plus or minus the width, however few the items; the
p-values and every bound already within the scale are as the full interval's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from curll.evaluate.intervals import crossed
from curll.evaluate.report import build
from curll.evaluate.results import _paired_cells
from curll.evaluate.values import judge_ranges, judge_values
from tests.evaluate.test_analysis import scores

KINDS = ["ir", "cqa", "sum"]


def noisy(seed: int = 0) -> pd.DataFrame:
    """The analysis tests' scores (2 items per stage and type, so 1 degree of freedom a cell)
    with each score redrawn from 1-5: items differ, and t(1) = 12.7 spreads the intervals."""
    s = scores()
    rng = np.random.default_rng(seed)
    return s.assign(score=rng.integers(1, 6, size=len(s)).astype(float))


def expected(name: str) -> tuple[float, float]:
    """The bounds of a judge value, written out here by its name's shape (ratings 1-5, 2 types)."""
    parts = name.split("/")
    kind = parts[1] if len(parts) == 3 else parts[2]
    width = 8.0 if kind == "sum" else 4.0
    if parts[0] == "cell" or (len(parts) == 3 and parts[2] == "AP"):
        return (2.0, 10.0) if kind == "sum" else (1.0, 5.0)
    return (-width, width)  # paired cells, differences of AP, FGT, BWT, FWT, FWT_zero_shot


def compute(rows: pd.DataFrame, w: np.ndarray) -> dict[str, np.ndarray]:
    """Every judge value and the joint-minus-continual cells, as the report bootstraps them."""
    return _paired_cells(judge_values(rows, w, KINDS), [("joint", "continual")])


def test_every_judge_interval_lies_within_its_bounds_and_only_the_bound_changes():
    s = noisy()
    full = crossed(s, "item_id", 200, 7, compute)
    clipped = crossed(s, "item_id", 200, 7, compute, ranges=judge_ranges(s, KINDS))
    assert clipped.keys() == full.keys()
    assert sum(n.startswith("paired/") for n in full) == 4 and sum(n.startswith("diff/") for n in full) == 9
    reached, kept = 0, 0
    for name, f in full.items():
        c = clipped[name]
        assert (c.value, c.p) == (f.value, f.p), name
        if f.lo is None:
            assert c.lo is None and c.hi is None, name
            continue
        assert f.hi is not None and c.lo is not None and c.hi is not None
        low, high = expected(name)
        assert low <= c.lo <= c.hi <= high, f"{name}: [{c.lo}, {c.hi}] outside [{low}, {high}]"
        assert c.lo == pytest.approx(max(f.lo, low)) and c.hi == pytest.approx(min(f.hi, high)), name
        reached += f.lo < low or f.hi > high
        kept += low <= f.lo and f.hi <= high
    assert reached > 10  # the case at hand: 2 items a cell reach past the scale unclipped
    assert kept > 0  # and a CL metric over every item can be narrower than its bounds


def test_the_report_matrices_of_a_two_item_run_stay_on_the_scale(tmp_path):
    s = noisy(1)
    items = s[s["run"] == "continual/0"][["item_id", "stage"]].assign(reference="A cat sat on the mat.")
    degree = pd.Series(0, index=s["indicator_id"].unique())
    build(s, items, degree, ["ir", "cqa"], tmp_path / "m", tmp_path / "p", samples=100, seed=1)
    for kind, (low, high) in {"ir": (1, 5), "cqa": (1, 5), "sum": (2, 10)}.items():
        lo = pd.read_csv(tmp_path / "m" / f"continual_{kind}_lo.csv", index_col=0)
        hi = pd.read_csv(tmp_path / "m" / f"continual_{kind}_hi.csv", index_col=0)
        assert lo.notna().any().any(), kind
        assert (lo.stack().dropna() >= low).all() and (hi.stack().dropna() <= high).all(), kind


def test_a_difference_of_two_orders_forgetting_may_span_twice_the_width():
    ranges = judge_ranges(noisy(), KINDS)
    assert ranges("diff/joint-continual/ir/AP") == (-4.0, 4.0)
    assert ranges("diff/joint-continual/ir/BWT") == (-8.0, 8.0)  # (-4) - (+4) at the extremes
    assert ranges("diff/joint-continual/sum/FGT") == (-16.0, 16.0)
    assert ranges("continual/ir/unknown") is None and ranges("cell/continual/rubric/0/0") is None


def test_scores_off_the_scale_never_get_an_interval_that_leaves_out_their_value():
    s = noisy(2)
    s["score"] = s["score"] + 2.0  # 3-7: past what the bounds were made for
    got = crossed(s, "item_id", 100, 3, compute, ranges=judge_ranges(s, KINDS))
    bounded = [iv for iv in got.values() if iv.lo is not None]
    assert len(bounded) > 20
    for iv in bounded:
        assert iv.value is not None and iv.lo is not None and iv.hi is not None
        assert iv.lo <= iv.value <= iv.hi
