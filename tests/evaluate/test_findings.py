"""The report's sentences follow the numbers: an interval without 0 is an effect, with 0 is none."""

from __future__ import annotations

from typing import Any

from curll.evaluate.findings import findings


def metrics(fgt_lo: float) -> dict[str, Any]:
    return {
        "orders": {
            "continual": {"sum": {"AP": 9.0, "AP_lo": 8.5, "AP_hi": 9.5, "FGT": 0.5, "FGT_lo": fgt_lo,
                                  "FGT_hi": 0.8, "BWT": -0.1, "BWT_lo": -0.4, "BWT_hi": 0.2}},
            "joint": {"sum": {"AP": 11.0, "AP_lo": 10.0, "AP_hi": 12.0}},
        },
        "loss": {
            "continual": {"all": {"mean_nll": 3.0, "mean_nll_lo": 2.9, "mean_nll_hi": 3.1}},
            "joint": {"all": {"mean_nll": 3.05, "mean_nll_lo": 3.0, "mean_nll_hi": 3.2}},
        },
    }  # fmt: skip


def test_sentences_follow_the_intervals():
    said = findings(metrics(fgt_lo=0.2))
    assert (
        "continual, judge: forgetting 0.500 [0.200, 0.800] excludes 0: scores on earlier stages fell." in said
    )
    assert (
        "continual, judge: backward transfer -0.100 [-0.400, 0.200] holds 0: not distinguishable from none."
        in said
    )
    assert any(s.startswith("judge AP") and "continual 9.000" in s and "do not overlap" in s for s in said)
    assert any(s.startswith("loss mean_nll") and "overlap: no difference shown" in s for s in said)
    flipped = findings(metrics(fgt_lo=-0.1))  # the same value, a wider interval: no longer an effect
    assert any("forgetting 0.500 [-0.100, 0.800] holds 0" in s for s in flipped)
    assert (
        findings({"orders": {"continual": {"sum": {"AP": 9.0, "FGT": 0.5}}}}) == []
    )  # no intervals, no claims
    caveat = findings({**metrics(0.2), "bootstrap": {"single_item_strata": {"judge": ["2/cqa"], "loss": []}}})
    assert caveat[0].startswith("judge: 1 stage/type groups hold one test item (2/cqa)")
    assert len(caveat) == len(said) + 1
