"""The headline: per order the loss, its baseline and the judge's verdict, from metrics.json."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from curll.evaluate.headline import COLUMNS, headline, identity, metric_files, rows

METRICS: dict[str, Any] = {
    "loss": {
        "continual": {"all": {"mean_nll": 4.81, "mean_nll_lo": 4.51, "mean_nll_hi": 5.12,
                              "FGT_nll_rise": 0.17,
                              "FGT_nll_rise_lo": -0.15, "FGT_nll_rise_hi": 0.5, "BWT_nll_fall": -0.11,
                              "BWT_nll_fall_lo": -0.47, "BWT_nll_fall_hi": 0.24}},
        "joint": {"all": {"mean_nll": 4.41, "mean_nll_lo": 4.05, "mean_nll_hi": 4.77}},
        "untrained": {"all": {"mean_nll": 9.0}},
    },
    "baseline": {"orders": {"continual": {"beats": True, "gain": 0.49, "lo": 0.25, "hi": 0.74,
                                          "models": 5, "beating": 5},
                            "joint": {"beats": False, "gain": 0.1, "lo": -0.2, "hi": 0.4,
                                      "models": 5, "beating": 2}}},
    "judge_controls": {"panel_informative": False,
                       "judges": {"j": {"informative": False, "sign_test_p": 0.2706}}},
}  # fmt: skip


def test_rows_give_every_trained_order_with_intervals_and_an_en_dash_where_absent(tmp_path):
    (tmp_path / "loss_continual_all_unigram.csv").write_text("trained_to,0,1\n0,5.0,6.0\n1,7.0,5.4\n")
    h = headline(METRICS, tmp_path)
    got = {r[0]: r for r in rows(h)}
    assert set(got) == {"continual", "joint"} and all(len(r) == len(COLUMNS) for r in got.values())
    assert got["continual"][1:] == ["4.81 [4.51, 5.12]", "0.17 [-0.15, 0.50]", "-0.11 [-0.47, 0.24]",
                                    "5.20", "0.49 [0.25, 0.74]", "5/5"]  # fmt: skip
    assert got["joint"][2:5] == ["\u2013"] * 3 and got["joint"][-1] == "2/5"  # models beating it
    assert h.judge_line() == "judge panel failed its controls: j not informative (sign test p 0.271)"
    why = "not shown to prefer the reference: 0.47 [0.35, 0.59]; rated an empty answer above it"
    judges = {"j": {**METRICS["judge_controls"]["judges"]["j"], "why": why}}
    told = {**METRICS, "judge_controls": {"panel_informative": False, "judges": judges}}
    said_why = headline(told, tmp_path).judge_line()
    assert said_why == f"judge panel failed its controls: j not informative: {why}"
    two = {"a": {"informative": True, "why": "prefers the reference"}, "b": {"informative": False}}
    panel = headline({**METRICS, "judge_controls": {"panel_informative": False, "judges": two}}, tmp_path)
    assert panel.judge_line() == (  # a judge with neither why nor p: its verdict alone; | between judges
        "judge panel failed its controls: a informative: prefers the reference | b not informative"
    )
    said = "3 of 10 trained models not shown to beat the unigram baseline on their own stage"
    assert h.gate_line().startswith(f"baseline gate failed: {said} (each tested alone at p < 0.05")
    joint = METRICS["baseline"]["orders"]["joint"]
    passed = {
        **METRICS,
        "baseline": {"orders": {**METRICS["baseline"]["orders"], "joint": {**joint, "beating": 5}}},
    }
    assert (
        headline(passed, tmp_path).gate_line().startswith("baseline gate passed: every one of the 10 trained")
    )
    assert headline({**METRICS, "baseline": {}}, tmp_path).gate_line() == ""  # a run without intervals
    recorded = {**METRICS, "baseline": {"orders": {o: {**v, "unigram": 5.123} for o, v in
                                                    METRICS["baseline"]["orders"].items()}}}  # fmt: skip
    assert rows(headline(recorded, tmp_path / "no-matrices"))[0][4] == "5.12"  # metrics.json's, no CSV


def test_metric_files_are_one_small_row_an_order(tmp_path):
    files = metric_files(headline(METRICS, tmp_path))
    assert set(files) == {"continual.json", "joint.json", "judge.json"}
    assert files["continual.json"] == {"nll": 4.81, "nll_lo": 4.51, "nll_hi": 5.12, "gain": 0.49,
                                       "gain_lo": 0.25, "gain_hi": 0.74}  # fmt: skip
    assert files["judge.json"] == {"informative": False}
    json.dumps(files)


def test_metric_files_hold_what_the_tables_show_and_a_run_without_intervals_its_gain(tmp_path):
    """The files held 3 decimals, which ``curll experiments`` rounded again: 0.625055 was 0.63 in
    ``curll results`` and 0.62 there. A run with ``bootstrap.samples: 0`` writes no ``baseline``
    section, and its gain was dropped although its matrix has it (the mean of its diagonal)."""
    import pandas as pd

    from curll.evaluate.report import build
    from tests.evaluate.test_analysis import losses_of, scores

    s = scores().assign(score=lambda f: f["score"] + f["item_id"].str[-1].astype(int) * 0.5)
    items = s[s["run"] == "continual/0"][["item_id", "stage"]].assign(reference="A cat sat on the mat.")
    degree = pd.Series(0, index=s["indicator_id"].unique())
    m = tmp_path / "m"
    rep = build(s, items, degree, ["ir", "cqa"], m, tmp_path / "p", losses=losses_of(s), samples=0)
    assert "baseline" not in rep.metrics
    gain = pd.read_csv(m / "loss_continual_all_gain.csv", index_col=0)
    own = sum(gain.loc[t, str(t)] for t in gain.index) / len(gain.index)
    got = metric_files(headline(rep.metrics, m))["continual.json"]
    assert got["gain"] == float(f"{own:.2f}") and got["gain_lo"] is None and got["nll"] is not None
    both = {"loss": {"joint": {"all": {"mean_nll": 1.0}}},
            "baseline": {"orders": {"joint": {"gain": 0.625055, "lo": -0.0041, "hi": 0.2}}}}  # fmt: skip
    rounded = metric_files(headline(both, tmp_path))["joint.json"]
    assert rounded["gain"] == 0.63 and str(rounded["gain_lo"]) == "0.0"  # as shown; never -0.0


def test_identity_names_params_hash_model_and_dirty_commit(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(
        "llm:\n  use: a\n  profiles:\n    a: {model: m}\ntrain: {preset: tiny, seeds: [4, 5]}\n"
    )
    assert identity(params).commit == "no git" or "+" not in identity(params).commit
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "params.yaml"], check=True)
    subprocess.run([*git, "commit", "-qm", "p"], check=True)
    clean = identity(params)
    assert clean.llm == "a (m)" and len(clean.params_hash) == 12 and not clean.commit.endswith("+dirty")
    (tmp_path / "dvc.lock").write_text("a\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "m.json").write_text("{}\n")
    subprocess.run([*git, "add", "dvc.lock", "data"], check=True)
    subprocess.run([*git, "commit", "-qm", "outputs"], check=True)
    (tmp_path / "dvc.lock").write_text("b\n")  # what a run rewrites: still the commit that ran
    (tmp_path / "data" / "m.json").write_text("{1}\n")
    assert not identity(params).commit.endswith("+dirty")
    params.write_text(params.read_text() + "# edited\n")  # a comment: the same params
    commented = identity(params)
    assert commented.commit.endswith("+dirty") and commented.params_hash == clean.params_hash
    block = "llm:\n  use: a\n  profiles:\n    a:\n      model: m\ntrain:\n  preset: tiny\n  seeds:\n"
    block += "  - 4\n  - 5\n"
    params.write_text(block)  # the same values in the block style DVC writes back
    assert identity(params).params_hash == clean.params_hash
    params.write_text(block.replace("- 5", "- 6"))
    dirty = identity(params)
    assert dirty.commit.endswith("+dirty") and dirty.params_hash != clean.params_hash
    assert "params " + dirty.params_hash in dirty.line()
    assert "trained tiny, data budget, seeds 4,6" in dirty.line()


def test_results_shows_the_identity_of_the_run_not_of_todays_params(tmp_path):
    from pathlib import Path

    from harness.commands import curll

    root = Path(__file__).resolve().parents[2]
    (tmp_path / "params.yaml").write_text((root / "params.yaml").read_text())
    run = identity(tmp_path / "params.yaml")
    recorded = {**run.record(), "params_hash": "0123456789ab", "commit": "abc1234"}
    out = tmp_path / "data" / "evaluate"
    (out / "matrices").mkdir(parents=True)
    (out / "metrics.json").write_text(json.dumps({**METRICS, "run": recorded}))
    shown = curll("results", cwd=tmp_path).stdout
    assert "params 0123456789ab |" in shown and "| commit abc1234\n" in shown
    assert "written" not in shown  # the file's time is its checkout's, not the run's
    assert "no run identity" not in shown
    assert f"params.yaml differs from the params of this run (now {run.params_hash})" in shown
    (out / "metrics.json").write_text(json.dumps({**METRICS, "run": run.record()}))
    assert "differs from" not in curll("results", cwd=tmp_path).stdout
    (out / "metrics.json").write_text(json.dumps({**METRICS, "run": {"params_hash": "x"}}))  # not ours
    shown = curll("results", cwd=tmp_path).stdout
    assert f"params {run.params_hash} |" in shown  # today's identity, said to be so
    assert "metrics.json: no run identity this version reads; the line above is today's\n" in shown


def test_results_into_a_pipe_are_120_columns_wide_even_where_colour_is_forced(tmp_path):
    """A CI runner's ``FORCE_COLOR`` makes rich take a pipe for an 80-column terminal."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    from harness.commands import env

    root = Path(__file__).resolve().parents[2]
    (tmp_path / "params.yaml").write_text((root / "params.yaml").read_text())
    out = tmp_path / "data" / "evaluate"
    (out / "matrices").mkdir(parents=True)
    recorded = {**identity(tmp_path / "params.yaml").record(), "params_hash": "0123456789ab"}
    # the widest row a run can give: a loss of 10 or more (ln V is 10.8 at a 49k vocabulary), every
    # interval below zero, 10 of 15 models beating the baseline
    wide = {"mean_nll": 10.81, "mean_nll_lo": 10.51, "mean_nll_hi": 11.12, "FGT_nll_rise": -0.12,
            "FGT_nll_rise_lo": -0.3, "FGT_nll_rise_hi": -0.06, "BWT_nll_fall": -0.11,
            "BWT_nll_fall_lo": -0.47, "BWT_nll_fall_hi": -0.24}  # fmt: skip
    base = {"beats": False, "gain": -0.49, "lo": -0.75, "hi": -0.25, "models": 15, "beating": 10,
            "unigram": 10.2}  # fmt: skip
    metrics = {**METRICS, "loss": {**METRICS["loss"], "independent": {"all": wide}},
               "baseline": {"orders": {**METRICS["baseline"]["orders"], "independent": base}}}  # fmt: skip
    (out / "metrics.json").write_text(json.dumps({**metrics, "run": recorded}))
    shown = subprocess.run([sys.executable, "-m", "pipeline.tools.cli", "results"], cwd=tmp_path,
                           env={**env(), "FORCE_COLOR": "1", "COLUMNS": "80"},
                           capture_output=True, text=True, check=True).stdout  # fmt: skip
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown)
    assert "`dvc status` says whether anything is stale" in plain  # one line, not wrapped at 80
    assert "10.81 [10.51, 11.12]" in plain and "-0.12 [-0.30, -0.06]" in plain and "10/15" in plain
    assert "…" not in plain  # no column cut short
    assert max(map(len, plain.splitlines())) <= 120


def test_identity_of_a_run_on_imported_records_names_their_folder_not_the_llm(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("llm:\n  use: a\n  profiles:\n    a: {model: m}\n"
                      "split: {source: import, imported: {dir: downloads}}\n")  # fmt: skip
    assert identity(params).llm == "none: records imported from downloads/"
    params.write_text(params.read_text().replace("source: import", "source: generated"))
    assert identity(params).llm == "a (m)"
