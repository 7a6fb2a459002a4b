"""The report's sentences follow the tests: the gate first (every trained model beats the
unigram baseline on its own stage, each at p < 0.05, an intersection-union test), the curriculum
tests only when it passes (Holm over them, loss and judge together), no judge test from a judge
that failed its controls, no test of max-based forgetting."""

from __future__ import annotations

from curll.evaluate.findings import as_json, baseline_verdict, claims, gate_keys, summary
from curll.evaluate.intervals import Interval


def gains(weak: float = 0.001, missing: bool = False) -> dict[str, Interval]:
    """Own-stage gain cells of two models an order (continual's stage 1 has p ``weak``), off-
    diagonal and per-type cells that are no part of the gate, and each order's mean gain."""
    out = {
        "gain/continual/all/0/0": Interval(0.4, 0.1, 0.7, 0.01),
        "gain/continual/all/1/1": Interval(0.6, 0.2, 1.0, weak),
        "gain/joint/all/0/0": Interval(0.5, 0.2, 0.8, 0.002),
        "gain/joint/all/1/1": Interval(0.7, 0.4, 1.0, 0.0001),
        "gain/joint/all/1/0": Interval(-0.9, -1.5, -0.3, 0.0001),  # not its own stage
        "gain/joint/ir/1/1": Interval(-0.9, -1.5, -0.3, 0.0001),  # one type: the gate pools them
        "gain/untrained/all/-1/0": Interval(-5.0, -6.0, -4.0, 0.0001),
        "continual/all/gain_own": Interval(0.5, 0.1, 0.9, 0.0001),
        "joint/all/gain_own": Interval(0.6, 0.3, 0.9, 0.0001),
    }
    if missing:  # a model whose gain no replicate could test
        out["gain/joint/all/1/1"] = Interval(0.7, None, None, None)
    return out


def loss_bounds(
    weak: float, diff_p: float, bwt_p: float = 0.004, missing: bool = False
) -> dict[str, Interval]:
    return {
        **gains(weak, missing),
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
GATE = [
    "gain/joint/all/0/0",
    "gain/joint/all/1/1",
    "gain/continual/all/0/0",
    "gain/continual/all/1/1",
]  # registry order


def test_the_gate_tests_each_model_unadjusted_and_holm_runs_within_each_curriculum_family():
    found = claims({"loss": loss_bounds(0.04, 0.03), "judge": JUDGE}, judge_informative=True)
    assert [c.key for c in found if c.family == "baseline"] == GATE
    assert {(c.family, c.key) for c in found if c.family != "baseline"} == {
        ("loss", "continual/all/BWT_nll_fall"), ("loss", "diff/joint-continual/all/mean_nll"),
        ("judge", "continual/sum/BWT"), ("judge", "diff/joint-continual/sum/AP"),
    }  # fmt: skip
    by = {c.key: c for c in found}
    # the gate: each model at 0.05, not adjusted (Holm over 4 would make 0.04 into 0.08)
    assert by["gain/continual/all/1/1"].p_holm == 0.04 and by["gain/continual/all/1/1"].holds
    # the curriculum: .0001 .001 .004 .03 times 4 3 2 1
    assert by["continual/sum/BWT"].p_holm == 0.0004 and by["diff/joint-continual/sum/AP"].p_holm == 0.003
    assert by["continual/all/BWT_nll_fall"].p_holm == 0.008 and by["continual/all/BWT_nll_fall"].holds
    assert by["diff/joint-continual/all/mean_nll"].p_holm == 0.03
    assert "forgetting" in by["continual/all/BWT_nll_fall"].direction
    assert "joint's loss is lower than continual's" in by["diff/joint-continual/all/mean_nll"].sentence()
    assert by["gain/joint/all/1/1"].sentence().startswith("joint trained to stage 1: gain over the unigram")
    without = claims({"loss": loss_bounds(0.001, 0.03), "judge": JUDGE}, judge_informative=False)
    assert {c.family for c in without} == {"baseline", "loss"} and len(without) == 6
    assert {c.key: c.p_holm for c in without}["continual/all/BWT_nll_fall"] == 0.004 * 2  # two tests now


def test_a_difference_that_does_not_survive_the_correction_is_not_said():
    """p .03 and .04 each pass alone; two tests in the family make them .06 and .06 (running max)."""
    bounds = loss_bounds(0.001, 0.03, 0.04)
    found = claims({"loss": bounds}, judge_informative=False)
    metrics = {"baseline": baseline_verdict(bounds), "claims": as_json(found),
               "judge_controls": {"panel_informative": False}}  # fmt: skip
    said = summary(metrics)
    assert said[0].startswith(
        "Every trained model beats the unigram baseline on its own stage (each of the 4 "
    )
    assert "joint 0.60 [0.30, 0.90]; continual 0.50 [0.10, 0.90]" in said[0]  # the orders' means
    assert any("failed its controls" in s for s in said)
    assert not any("joint - continual" in s or "backward" in s for s in said)
    assert said[-1] == "0 of 2 curriculum tests hold (Holm over them, alpha 0.05)."
    assert as_json(found)["tests"] == 2 and as_json(found)["held"] == 0


def test_one_model_not_beating_the_baseline_stops_every_curriculum_test():
    """Every order's mean gain is far above 0, but continual's model of stage 1 is not shown to
    beat the baseline: the gate fails and no curriculum test is made, however small its p."""
    bounds = loss_bounds(0.2, 0.0001, 0.0001)
    found = claims({"loss": bounds}, judge_informative=False)
    base = baseline_verdict(bounds)
    assert base["all_beat"] is False and base["orders"]["joint"]["beats"] is True
    assert base["orders"]["continual"] == {"gain": 0.5, "lo": 0.1, "hi": 0.9, "models": 2, "beating": 1,
                                           "beats": False}  # fmt: skip
    assert base["models"]["continual/1"] == {"gain": 0.6, "lo": 0.2, "hi": 1.0, "p": 0.2, "beats": False}
    curriculum = [c for c in found if c.family != "baseline"]
    assert curriculum and all(c.p_holm is None and not c.holds for c in curriculum)  # p .0001, untested
    said = summary({"baseline": base, "claims": as_json(found)})
    assert said[0].startswith("Not shown to beat the unigram baseline on its own stage: continual trained "
                              "to 1 (1 of 4 models; each must have a gain above 0 with p < 0.05")  # fmt: skip
    assert "No curriculum claim is tested at this scale" in said[0]
    assert said[-1] == "2 curriculum tests not made (the baseline gate failed)."
    assert as_json(found)["not_tested"] == 2


def test_a_model_whose_gain_has_no_p_value_does_not_pass_the_gate():
    bounds = loss_bounds(0.001, 0.0001, 0.0001, missing=True)
    found = claims({"loss": bounds}, judge_informative=False)
    assert "gain/joint/all/1/1" not in {c.key for c in found}
    assert all(c.p_holm is None for c in found if c.family != "baseline")
    base = baseline_verdict(bounds)
    assert not base["all_beat"] and base["models"]["joint/1"]["beats"] is False


def test_a_negative_gain_with_a_small_p_does_not_beat_the_baseline():
    bounds = {**loss_bounds(0.001, 0.0001), "gain/joint/all/0/0": Interval(-0.5, -0.8, -0.2, 0.001)}
    assert not baseline_verdict(bounds)["all_beat"]
    assert all(
        c.p_holm is None for c in claims({"loss": bounds}, judge_informative=False) if c.family == "loss"
    )


def test_a_judge_that_failed_says_what_its_controls_showed_not_that_it_cannot_prefer():
    """A failed sign test is no evidence of no preference: the sentence gives the judge's own
    verdict ("not shown to ..."), never "does not rate a reference above" as a finding."""
    bounds = loss_bounds(0.001, 0.03)
    found = claims({"loss": bounds}, judge_informative=False)
    why = "not shown to prefer the reference to another item's answer: 0.57 [0.40, 0.73] over 30 items"
    metrics = {"baseline": baseline_verdict(bounds), "claims": as_json(found),
               "judge_controls": {"panel_informative": False, "judges": {"j": {"why": why}}}}  # fmt: skip
    [line] = [s for s in summary(metrics) if "failed its controls" in s]
    assert f"(j not informative: {why})" in line and "does not rate" not in line


def test_the_models_not_beating_the_baseline_are_named_in_the_registrys_order_whatever_the_json_order():
    from curll.evaluate.findings import not_beating

    models = {f"{o}/{s}": {"beats": s == 1} for o in ("continual", "independent") for s in (10, 2, 0, 1)}
    assert (
        not_beating({"models": models})
        == "independent trained to 0, 2 and 10; continual trained to 0, 2 and 10"
    )


def test_a_metrics_file_of_the_per_order_gate_still_reads():
    """``metrics.json`` written before the gate tested each model: a verdict per order only."""
    old = {"orders": {"joint": {"gain": 0.6, "lo": 0.3, "hi": 0.9, "p_holm": 0.01, "beats": True},
                      "continual": {"gain": 0.1, "lo": -0.2, "hi": 0.4, "p_holm": 0.4, "beats": False}},
           "all_beat": False}  # fmt: skip
    said = summary({"baseline": old, "claims": {"list": []}})
    assert said[0].startswith(
        "Not shown to beat the unigram baseline on its own stage: continual (1 of 2 models"
    )


def test_an_order_outside_the_registry_does_not_break_the_gate():
    from curll.evaluate.findings import gate_keys

    bounds = {**gains(), "gain/mystery/all/0/0": Interval(0.5, 0.1, 0.9, 0.01)}
    assert gate_keys(bounds)[-1] == "gain/mystery/all/0/0"


def test_a_model_whose_own_stage_has_no_scored_record_is_not_shown_to_beat_the_baseline():
    """Continual's stage-1 records were all unscored (too long for the context): its model has
    gain cells on other stages but none on its own. The gate counts it and fails; before, the
    model was left out and the summary said every trained model beat the baseline."""
    bounds = {k: v for k, v in gains().items() if k != "gain/continual/all/1/1"}
    bounds["gain/continual/all/1/0"] = Interval(0.3, 0.1, 0.5, 0.001)  # stage 0 still scored
    base = baseline_verdict(bounds)
    assert "gain/continual/all/1/1" in gate_keys(bounds) and not base["all_beat"]
    assert base["models"]["continual/1"] == {"gain": None, "lo": None, "hi": None, "p": None, "beats": False}
    assert base["orders"]["continual"]["models"] == 2
    said = summary({"baseline": base, "claims": as_json(claims({"loss": bounds}, judge_informative=False))})
    assert said[0].startswith("Not shown to beat the unigram baseline on its own stage: continual trained "
                              "to 1 (1 of 4 models")  # fmt: skip


def test_a_mean_without_an_interval_is_written_alone_never_with_dashes_for_bounds():
    """One item a stratum: the order means have no interval; the opening sentence gives the
    value alone (before: ``1.18 [-, -]``)."""
    bounds = {**gains(), "continual/all/gain_own": Interval(0.5, None, None, None)}
    said = summary({"baseline": baseline_verdict(bounds), "claims": {"list": []}})[0]
    assert "continual 0.50)" in said  # the last order: the means' parenthesis closes
    assert "[-" not in said and "None" not in said and "joint 0.60 [0.30, 0.90]" in said
