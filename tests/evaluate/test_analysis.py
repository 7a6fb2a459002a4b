"""Scores -> matrices per order and type, CL metrics with both FWT variants, groups, out-degree."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from curll.evaluate.analysis import group_metrics, matrix, order_metrics, out_degree
from curll.evaluate.report import build
from tests import instances as inst

# score of each order's model trained_to t on test stage i, for type ir; cqa is ir + 1
J = {
    "continual": [[4.0, 1.0], [3.0, 5.0]],
    "independent": [[4.0, 2.0], [1.0, 4.0]],
    "joint": [[4.0, 1.0], [4.0, 4.5]],
}


def scores() -> pd.DataFrame:
    rows = []
    for order, m in J.items():
        for t in (0, 1):
            for i in (0, 1):
                for kind, bump in (("ir", 0.0), ("cqa", 1.0)):
                    for k in range(2):  # two items per stage and type (one per indicator)
                        rows.append({"item_id": f"{i}{kind}{k}", "run": f"{order}/{t}", "order": order,
                                     "seed": 42, "trained_to": t, "answer": "The cat sat on the mat today.",
                                     "no_answer": False, "score": m[t][i] + bump, "stage": i, "type": kind,
                                     "indicator_id": inst.hx(f"ind{i}{k}"), "skill": f"skill{k}",
                                     "subskill": "s", "indicator": f"ind{i}{k}"})  # fmt: skip
    for i in (0, 1):
        for kind in ("ir", "cqa"):
            for k in range(2):
                rows.append({"item_id": f"{i}{kind}{k}", "run": "untrained", "order": "untrained", "seed": 42,
                             "trained_to": -1, "answer": "", "no_answer": True, "score": 1.0, "stage": i,
                             "type": kind,
                             "indicator_id": inst.hx(f"ind{i}{k}"), "skill": f"skill{k}", "subskill": "s",
                             "indicator": f"ind{i}{k}"})  # fmt: skip
    return pd.DataFrame(rows)


def test_matrices_per_type_and_summed():
    s = scores()
    assert matrix(s, "continual", "ir").to_numpy().tolist() == J["continual"]
    summed = matrix(s, "continual", "sum").to_numpy().tolist()
    assert summed == [[9.0, 3.0], [7.0, 11.0]]  # ir + (ir + 1)


def test_a_model_without_any_score_keeps_its_row_and_its_stage():
    """The issue's case: today's pivot dropped the all-missing row and the metrics took the
    trained stages from the rows left, so stage 1 looked untrained (AP 4.0, zero-shot FWT 0.0)."""
    rows = []
    for t, cells in enumerate([[4.0, 2.0, 1.0], [math.nan] * 3, [3.0, 1.0, 5.0]]):
        for i, v in enumerate(cells):
            rows.append({"item_id": f"i{i}", "run": f"continual/{t}", "order": "continual", "seed": 42,
                         "trained_to": t, "score": v, "stage": i, "type": "ir"})  # fmt: skip
    rows += [{"item_id": f"i{i}", "run": "untrained", "order": "untrained", "seed": 42, "trained_to": -1,
              "score": 1.0, "stage": i, "type": "ir"} for i in range(3)]  # fmt: skip
    s = pd.DataFrame(rows)
    j = matrix(s, "continual", "ir")
    assert list(j.index) == [0, 1, 2] and j.loc[1].isna().all()
    assert list(matrix(s, "continual", "ir", value="n").loc[1]) == [0, 0, 0]
    m = order_metrics(s, ["ir"])["continual"]["ir"]
    assert m["AP"] == pytest.approx(3.0) and m["FWT_zero_shot"] == pytest.approx(1.0)
    assert m["unmeasured_stages"] == []  # stage 1 still has its test column (scores of models 0 and 2)


def test_a_summed_cell_needs_every_type_and_the_gap_is_named():
    s = scores()
    s = s[~((s["type"] == "cqa") & (s["stage"] == 1))]  # no cqa test item of stage 1
    summed = matrix(s, "continual", "sum")
    assert summed[1].isna().all() and summed[0].tolist() == [9.0, 7.0]
    assert matrix(s, "continual", "sum", value="n")[1].tolist() == [0, 0]
    m = order_metrics(s, ["ir", "cqa", "sum"])["continual"]
    assert m["sum"]["unmeasured_stages"] == [1] and m["cqa"]["unmeasured_stages"] == [1]
    assert m["ir"]["unmeasured_stages"] == []


def test_order_metrics_use_independent_and_untrained_baselines():
    m = order_metrics(scores(), ["ir", "sum"])
    assert set(m) == {"independent", "joint", "continual"}
    c = m["continual"]["ir"]
    assert (
        c["AP"] == pytest.approx(4.0) and c["FGT"] == pytest.approx(1.0) and c["BWT"] == pytest.approx(-1.0)
    )
    assert c["FWT"] == pytest.approx(1.0)  # J[1][1] - Jind[1][1] = 5 - 4
    assert c["FWT_zero_shot"] == pytest.approx(0.0)  # J[0][1] - b_1 = 1 - 1
    assert "FWT" not in m["independent"]["ir"]  # no FWT of the baseline against itself
    # from-scratch models are no sequence: forgetting and backward transfer are not defined
    assert {"FGT", "BWT"}.isdisjoint(m["independent"]["ir"]) and "FGT" not in m["independent"]["ir"]["series"]
    # joint models are from scratch too (each on stages 0..k together): a drop in their score on
    # stage i is no forgetting, so they have none either; the joint - continual map compares them
    assert {"FGT", "BWT"} <= set(m["continual"]["ir"]) and {"FGT", "BWT"}.isdisjoint(m["joint"]["ir"])
    assert m["continual"]["sum"]["AP"] == pytest.approx(9.0)


def test_group_metrics_and_out_degree():
    by_indicator = group_metrics(scores(), "continual", "indicator_id").set_index("group")
    # an indicator of stage 0 forgets 4 - 3 = 1 per type; one of stage 1 has no forgetting yet
    assert by_indicator.loc[inst.hx("ind00"), "FGT"] == pytest.approx(1.0)
    assert by_indicator["FGT"].isna().to_dict()[inst.hx("ind10")]
    # an indicator of stage 1: continual 5 vs independent 4 on its own stage
    assert by_indicator.loc[inst.hx("ind10"), "FWT"] == pytest.approx(1.0)
    independent = group_metrics(scores(), "independent", "skill")
    assert independent[["FWT", "FGT", "BWT"]].isna().all().all()
    ind = inst.indicators(["a", "b", "c"]).assign(stage=[0, 1, 1])
    edges = pd.DataFrame({"edge": [True, True, False, True], "src": [inst.hx(x) for x in "aabb"],
                          "dst": [inst.hx(x) for x in "bcab"], "status": "ok"})  # fmt: skip
    assert out_degree(edges, ind).tolist() == [2, 0, 0]  # b -> b is not into a later stage
    # an edge whose weight request failed is no edge of the graph, nor of the out-degree
    edges.loc[1, "status"] = "reject"
    assert out_degree(edges, ind).tolist() == [1, 0, 0]


def test_report_writes_matrices_figures_and_metrics(tmp_path):
    s = scores()
    items = s[s["run"] == "continual/0"][["item_id", "stage"]].assign(reference="A cat sat on the mat.")
    degree = pd.Series(0, index=s["indicator_id"].unique())
    rep = build(s, items, degree, ["ir", "cqa"], tmp_path / "m", tmp_path / "p")
    assert (tmp_path / "m" / "continual_sum.csv").read_text().startswith("trained_to,0,1")
    assert (tmp_path / "m" / "joint_minus_continual_sum.csv").is_file()
    diff = pd.read_csv(tmp_path / "m" / "joint_minus_continual_sum.csv", index_col=0)
    assert diff.to_numpy().tolist() == [[0.0, 0.0], [2.0, -1.0]]
    assert {p.name for p in (tmp_path / "p").iterdir()} >= {
        "heatmap_continual.png",
        "joint_minus_continual.png",
    }
    assert rep.metrics["orders"]["continual"]["sum"]["T"] == 1 and "unanswered" not in rep.metrics
    assert rep.metrics["no_answer"]["total"] == 8 and rep.metrics["no_answer"]["by_run"] == {"untrained": 8}
    assert (tmp_path / "m" / "continual_sum_n.csv").read_text().splitlines()[1:] == ["0,2,2", "1,2,2"]
    varied = s.assign(score=s["score"] + s["item_id"].str[-1].astype(int) * 0.5)  # items differ: a spread
    rep = build(varied, items, degree, ["ir", "cqa"], tmp_path / "m2", tmp_path / "p2", samples=30, seed=1)
    ap = rep.metrics["orders"]["continual"]["sum"]
    assert ap["AP_lo"] <= ap["AP"] <= ap["AP_hi"] and rep.metrics["bootstrap"]["samples"] == 30
    assert (tmp_path / "m2" / "continual_sum_lo.csv").is_file() and (
        tmp_path / "m2" / "continual_sum_hi.csv"
    ).is_file()
    table = next(t for name, t in rep.tables.items() if name.startswith("continual: summed"))
    assert all("[" in str(c) and "(n=" in str(c) for c in table.to_numpy().ravel())
    answers = s[["item_id", "run", "answer", "trained_to", "order", "seed"]].assign(
        status="ok", truncated=False
    )
    answers["reason"] = ""
    answers.loc[answers.index[0], ["status", "reason"]] = ["reject", "backend error: connection reset"]
    rep = build(s, items, degree, ["ir", "cqa"], tmp_path / "m", tmp_path / "p", answers=answers)
    run = str(answers["run"].iloc[0])
    assert rep.metrics["unanswered"] == {"total": 1, "answers": len(answers), "by_run": {run: 1}}


def losses_of(scores: pd.DataFrame, rng_seed: int = 0) -> pd.DataFrame:
    """A loss row per (item, model) of ``scores``: 10 answer tokens, NLL falling with the judge
    score plus item noise, and a unigram baseline 0.5 nats a token above every trained model."""
    import numpy as np

    rng = np.random.default_rng(rng_seed)
    out = scores[["item_id", "run", "order", "seed", "trained_to", "stage", "type"]].rename(
        columns={"item_id": "record_id"}
    )
    out = out.assign(record_id=[inst.hx(r) for r in out["record_id"]], split="test", tokens=10)
    nll = 10 * (8.0 - scores["score"].to_numpy() * 0.5 + rng.normal(0, 0.2, len(out)))
    return out.assign(nll=nll, unigram_nll=nll + 5.0 + rng.normal(0, 0.5, len(out)))


def test_the_report_writes_baseline_rows_gains_paired_differences_and_corrected_claims(tmp_path):
    s = scores().assign(score=lambda f: f["score"] + f["item_id"].str[-1].astype(int) * 0.5)
    items = s[s["run"] == "continual/0"][["item_id", "stage"]].assign(reference="A cat sat on the mat.")
    degree = pd.Series(0, index=s["indicator_id"].unique())
    rep = build(s, items, degree, ["ir", "cqa"], tmp_path / "m", tmp_path / "p", losses=losses_of(s),
                samples=200, seed=1, judge_informative=False)  # fmt: skip
    m = tmp_path / "m"
    assert (m / "untrained_sum.csv").read_text().splitlines()[1].startswith("-1,")  # the untrained row
    assert (m / "loss_untrained_all.csv").read_text().splitlines()[1].startswith("-1,")
    gain = pd.read_csv(m / "loss_continual_all_gain.csv", index_col=0)
    assert gain.to_numpy() == pytest.approx(0.5, abs=0.2)  # the planted 0.5 nats a token
    assert (m / "loss_continual_all_gain_lo.csv").is_file() and (m / "loss_joint_all_unigram.csv").is_file()
    base = rep.metrics["baseline"]
    assert base["all_beat"] and base["orders"]["continual"]["gain"] == pytest.approx(0.5, abs=0.1)
    diffs = rep.metrics["differences"]["loss"]
    assert set(diffs) >= {"joint-continual/all/mean_nll", "independent-joint/all/mean_nll"}
    listed = rep.metrics["claims"]["list"]
    assert {c["family"] for c in listed} == {"baseline", "loss"}  # the judge: uninformative
    assert all(0 <= c["p"] <= c["p_holm"] <= 1 for c in listed)  # the gate passed: all tested
    assert rep.metrics["bootstrap"]["inflation"]["loss"]["factor"] == pytest.approx(
        2**0.5
    )  # 2 items a stratum


def test_every_loss_metric_with_an_interval_has_its_value_beside_it(tmp_path):
    """``metrics.json``'s loss section: no ``_lo``/``_hi`` without the value they bound (the mean
    gain on each model's own stage, bootstrapped rather than read off a matrix, included)."""
    s = scores().assign(score=lambda f: f["score"] + f["item_id"].str[-1].astype(int) * 0.5)
    items = s[s["run"] == "continual/0"][["item_id", "stage"]].assign(reference="A cat sat on the mat.")
    degree = pd.Series(0, index=s["indicator_id"].unique())
    rep = build(s, items, degree, ["ir", "cqa"], tmp_path / "m", tmp_path / "p", losses=losses_of(s),
                samples=30, seed=1)  # fmt: skip
    for order, kinds in rep.metrics["loss"].items():
        for kind, vals in kinds.items():
            bounded = {k.removesuffix("_lo") for k in vals if k.endswith("_lo")}
            assert bounded <= set(vals), (order, kind, bounded - set(vals))
            assert vals["gain_own_lo"] <= vals["gain_own"] <= vals["gain_own_hi"], (order, kind)
