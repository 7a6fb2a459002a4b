"""The report's sentences follow the tests: Holm over every claim, the baseline verdict first,
no judge claim from a judge that failed its controls, no test of max-based forgetting."""

from __future__ import annotations

from curll.evaluate.findings import as_json, baseline_verdict, claims, summary
from curll.evaluate.intervals import Interval


def loss_bounds(gain_lo: float, diff_p: float, bwt_p: float = 0.004) -> dict[str, Interval]:
    return {
        "continual/all/gain_own": Interval(0.5, gain_lo, 0.9, 0.001),
        "joint/all/gain_own": Interval(0.6, 0.3, 0.9, 0.0001),
        "continual/all/FGT_nll_rise": Interval(0.4, 0.2, 0.6, 0.0001),  # shown, never tested
        "continual/all/BWT_nll_fall": Interval(-0.3, -0.5, -0.1, bwt_p),
        "continual/all/mean_nll": Interval(3.0, 2.9, 3.1, 0.0),  # a level: compared as a difference only
        "diff/joint-continual/all/mean_nll": Interval(-0.26, -0.35, -0.17, diff_p),
        "cell/continual/all/0/0": Interval(3.0, 2.0, 4.0, 0.0),
    }


JUDGE = {
    "continual/sum/BWT": Interval(-2.0, -3.0, -1.0, 0.0001),
    "diff/joint-continual/sum/AP": Interval(1.0, 0.5, 1.5, 0.001),
}


def test_holm_runs_over_every_test_and_judge_tests_need_an_informative_panel():
    found = claims({"loss": loss_bounds(0.1, 0.03), "judge": JUDGE}, judge_informative=True)
    keys = {(c.family, c.key) for c in found}
    assert keys == {("baseline", "continual/all/gain_own"), ("baseline", "joint/all/gain_own"),
                    ("loss", "continual/all/BWT_nll_fall"), ("loss", "diff/joint-continual/all/mean_nll"),
                    ("judge", "continual/sum/BWT"), ("judge", "diff/joint-continual/sum/AP")}  # fmt: skip
    by = {c.key: c for c in found}
    # p sorted: .0001 .0001 .001 .001 .004 .03, times 6 5 4 3 2 1 (then a running max)
    assert (
        by["diff/joint-continual/all/mean_nll"].p_holm == 0.03 and by["joint/all/gain_own"].p_holm == 0.0006
    )
    assert by["continual/all/BWT_nll_fall"].p_holm == 0.008 and by["continual/all/BWT_nll_fall"].holds
    assert "forgetting" in by["continual/all/BWT_nll_fall"].direction
    assert "joint's loss is lower than continual's" in by["diff/joint-continual/all/mean_nll"].sentence()
    without = claims({"loss": loss_bounds(0.1, 0.03), "judge": JUDGE}, judge_informative=False)
    assert {c.family for c in without} == {"baseline", "loss"} and len(without) == 4
    assert {c.key: c.p_holm for c in without}["joint/all/gain_own"] == 0.0004  # four tests now


def test_a_difference_that_does_not_survive_the_correction_is_not_said():
    """p .03 and .04 each pass alone; with four tests they become .06 and .06 (running max)."""
    found = claims({"loss": loss_bounds(0.1, 0.03, 0.04)}, judge_informative=False)
    metrics = {"baseline": baseline_verdict(loss_bounds(0.1, 0.03, 0.04), ["continual", "joint"]),
               "claims": as_json(found), "judge_controls": {"panel_informative": False}}  # fmt: skip
    said = summary(metrics)
    assert said[0].startswith("Every order's models beat the unigram baseline")
    assert any("failed its controls" in s for s in said)
    assert not any("joint - continual" in s or "backward" in s for s in said)
    assert said[-1] == "2 of 4 tests hold after Holm's correction for 4 tests (alpha 0.05)."


def test_the_first_line_says_when_models_do_not_beat_the_unigram_baseline():
    bounds = loss_bounds(-0.1, 0.001)
    metrics = {"baseline": baseline_verdict(bounds, ["continual", "joint"]),
               "claims": as_json(claims({"loss": bounds}, judge_informative=False))}  # fmt: skip
    assert (
        metrics["baseline"]["all_beat"] is False and metrics["baseline"]["orders"]["joint"]["beats"] is True
    )
    said = summary(metrics)
    assert "do not beat the unigram baseline on their own stage (continual" in said[0]
    assert "no curriculum claim can be made at this scale" in said[0]
