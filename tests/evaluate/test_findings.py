"""The report's sentences follow the tests: the baseline family first (Holm within it), the
curriculum family only when every order beats the baseline (Holm within it), no judge test from a
judge that failed its controls, no test of max-based forgetting."""

from __future__ import annotations

from curll.evaluate.findings import as_json, baseline_verdict, claims, summary
from curll.evaluate.intervals import Interval


def loss_bounds(gain_p: float, diff_p: float, bwt_p: float = 0.004) -> dict[str, Interval]:
    return {
        "continual/all/gain_own": Interval(0.5, 0.1, 0.9, gain_p),
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


def test_holm_runs_within_each_family_and_judge_tests_need_an_informative_panel():
    found = claims({"loss": loss_bounds(0.001, 0.03), "judge": JUDGE}, judge_informative=True)
    assert {(c.family, c.key) for c in found} == {
        ("baseline", "continual/all/gain_own"), ("baseline", "joint/all/gain_own"),
        ("loss", "continual/all/BWT_nll_fall"), ("loss", "diff/joint-continual/all/mean_nll"),
        ("judge", "continual/sum/BWT"), ("judge", "diff/joint-continual/sum/AP"),
    }  # fmt: skip
    by = {c.key: c for c in found}
    # the gate: p .0001 .001 times 2 1; the curriculum: .0001 .001 .004 .03 times 4 3 2 1
    assert by["joint/all/gain_own"].p_holm == 0.0002 and by["continual/all/gain_own"].p_holm == 0.001
    assert by["continual/sum/BWT"].p_holm == 0.0004 and by["diff/joint-continual/sum/AP"].p_holm == 0.003
    assert by["continual/all/BWT_nll_fall"].p_holm == 0.008 and by["continual/all/BWT_nll_fall"].holds
    assert by["diff/joint-continual/all/mean_nll"].p_holm == 0.03
    assert "forgetting" in by["continual/all/BWT_nll_fall"].direction
    assert "joint's loss is lower than continual's" in by["diff/joint-continual/all/mean_nll"].sentence()
    without = claims({"loss": loss_bounds(0.001, 0.03), "judge": JUDGE}, judge_informative=False)
    assert {c.family for c in without} == {"baseline", "loss"} and len(without) == 4
    assert {c.key: c.p_holm for c in without}["continual/all/BWT_nll_fall"] == 0.004 * 2  # two tests now


def test_a_difference_that_does_not_survive_the_correction_is_not_said():
    """p .03 and .04 each pass alone; two tests in the family make them .06 and .06 (running max)."""
    found = claims({"loss": loss_bounds(0.001, 0.03, 0.04)}, judge_informative=False)
    metrics = {"baseline": baseline_verdict(found), "claims": as_json(found),
               "judge_controls": {"panel_informative": False}}  # fmt: skip
    said = summary(metrics)
    assert said[0].startswith("Every order's models beat the unigram baseline")
    assert any("failed its controls" in s for s in said)
    assert not any("joint - continual" in s or "backward" in s for s in said)
    assert said[-1] == "2 of 4 tests made hold (Holm within each family, alpha 0.05)."


def test_when_an_order_does_not_beat_the_baseline_no_curriculum_claim_is_tested():
    found = claims({"loss": loss_bounds(0.2, 0.0001, 0.0001)}, judge_informative=False)
    base = baseline_verdict(found)
    assert base["all_beat"] is False and base["orders"]["joint"]["beats"] is True
    assert base["orders"]["continual"] == {"gain": 0.5, "lo": 0.1, "hi": 0.9, "p_holm": 0.2, "beats": False}
    curriculum = [c for c in found if c.family != "baseline"]
    assert curriculum and all(c.p_holm is None and not c.holds for c in curriculum)  # p .0001, untested
    said = summary({"baseline": base, "claims": as_json(found)})
    assert said[0].startswith("Not shown to beat the unigram baseline on their own stage: continual")
    assert "No curriculum claim is tested at this scale" in said[0]
    assert (
        said[-1]
        == "1 of 2 tests made hold (Holm within each family, alpha 0.05); 2 curriculum tests not made."
    )
    assert as_json(found)["not_tested"] == 2


def test_a_judge_that_failed_says_what_its_controls_showed_not_that_it_cannot_prefer():
    """A failed sign test is no evidence of no preference: the sentence gives the judge's own
    verdict ("not shown to ..."), never "does not rate a reference above" as a finding."""
    found = claims({"loss": loss_bounds(0.001, 0.03)}, judge_informative=False)
    why = "not shown to prefer the reference to another item's answer: 0.57 [0.40, 0.73] over 30 items"
    metrics = {"baseline": baseline_verdict(found), "claims": as_json(found),
               "judge_controls": {"panel_informative": False, "judges": {"j": {"why": why}}}}  # fmt: skip
    [line] = [s for s in summary(metrics) if "failed its controls" in s]
    assert f"(j: {why})" in line and "does not rate" not in line
