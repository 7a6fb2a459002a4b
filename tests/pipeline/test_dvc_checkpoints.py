"""Checkpoints curll did not train through ``dvc repro``: tiny Hub-layout folders (transformers'
own ``save_pretrained``, their own tokenizer) listed in ``evaluate.checkpoints`` are what every
evaluate stage scores and the report shows, and nothing before evaluate runs again. A copy of
the session's reproduced pipeline (:func:`tests.conftest.reproduced`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from curll.yamlio import dump_yaml, load_yaml
from harness.checkpoints import hub_tokenizer, save_checkpoint
from harness.commands import dvc, run
from tests.pipeline.test_dvc_smoke import EVALUATE, ran
from tests.repro import Reproduced

#: (order, stages) of each checkpoint: every model the default orders make on stages 6 and 7
RUNS = [("independent", [6]), ("independent", [7]), ("joint", [6]), ("joint", [6, 7]),
        ("continual", [6]), ("continual", [6, 7])]  # fmt: skip


def test_checkpoints_are_scored_in_place_of_the_trained_models(reproduced: Reproduced, tmp_path: Path):
    repo = tmp_path / "repo"
    shutil.copytree(reproduced.path, repo, symlinks=True)
    before = pd.read_csv(repo / "data/evaluate/matrices/loss_continual_all.csv", index_col=0)
    records = pd.read_parquet(repo / "data/split/records.parquet", columns=["messages"])
    tok = hub_tokenizer(records["messages"].head(200).tolist(), vocab_size=400)
    entries = []
    for i, (order, stages) in enumerate(RUNS):
        name = f"{order}-{'-'.join(map(str, stages))}"
        save_checkpoint(repo / "checkpoints" / name, tok, seed=i)
        entries.append({"order": order, "stages": stages, "path": name, "seed": 42})
    params = load_yaml(repo / "params.yaml")
    params["evaluate"]["checkpoints"]["models"] = entries
    dump_yaml(params, repo / "params.yaml")

    out = dvc("repro", cwd=repo)
    assert ran(out.stdout) == EVALUATE  # split, tokenizer and train are as they were

    want = {f"seed-42/{o}/{'-'.join(map(str, s))}" for o, s in RUNS} | {"seed-42/untrained"}
    losses = pd.read_parquet(repo / "data/evaluate/losses.parquet")
    answers = pd.read_parquet(repo / "data/evaluate/answers.parquet")
    assert set(losses["run"]) == want and set(answers["run"]) == want  # no model of train's
    assert losses["nll"].notna().any() and (answers["status"] == "ok").any()
    after = pd.read_csv(repo / "data/evaluate/matrices/loss_continual_all.csv", index_col=0)
    assert after.shape == before.shape and not after.equals(before)  # the checkpoints' losses
    report = (repo / "data/evaluate/report.html").read_text()
    assert "trained none here: 6 checkpoints in checkpoints/" in report
    metrics = json.loads((repo / "data/evaluate/metrics.json").read_text())
    assert metrics["run"]["model"] == "none here: 6 checkpoints in checkpoints/"

    run(["git", "add", "-A"], cwd=repo)  # a checkpoint's weights change: the evaluate stages rerun
    save_checkpoint(repo / "checkpoints" / "joint-6", tok, seed=99)
    assert "evaluate_loss" in dvc("status", cwd=repo).stdout
