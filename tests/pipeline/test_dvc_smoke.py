"""End-to-end: the real pipeline through real DVC in a temporary git repo (the session's one
``dvc repro``, :func:`tests.conftest.reproduced`)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from datasets import load_dataset

from curll.yamlio import dump_yaml, load_yaml
from harness.commands import curll, dvc, run
from tests.repro import STAGES, Reproduced

EVALUATE = {"evaluate_infer", "evaluate_loss", "evaluate_judge@embedded", "evaluate_panel", "evaluate"}
GENERATED = {
    "generate",
    "generate_merge",
    "verify",
    "split",
    "split_release",
    "tokenizer",
    "train",
    *EVALUATE,
}
ROOT = Path(__file__).resolve().parents[2]
PROFILES = load_yaml(ROOT / "params.yaml")["llm"]["profiles"]
ALL_STAGES = {
    "taxonomy",
    "vocab",
    *(f"llm_models@{name}" for name in PROFILES),
    "skill_graph",
    "templates",
    "seeds",
    "verify_encoder",
    *GENERATED,
}


def ran(output: str) -> set[str]:
    return {line.split("'")[1] for line in output.splitlines() if line.startswith("Running stage '")}


def sent(output: str) -> int:
    """Requests the generate stage sent to the model (the rest came from the cache)."""
    return sum(int(n) for n in re.findall(r"(\d+) sent to the model", output))


def test_repro_generates_everything_then_reruns_only_what_changed(reproduced: Reproduced, tmp_path: Path):
    repo, first = reproduced.path, reproduced.first
    assert ran(first.stdout) == ALL_STAGES
    data = repo / "data"
    # a curriculum of two later stages whose file repeats a cell: the repeat dropped and counted
    assert sorted(pd.read_parquet(data / "taxonomy" / "indicators.parquet")["stage"].unique()) == list(STAGES)
    taxonomy_stats = json.loads((data / "taxonomy" / "stats.json").read_text())
    assert (
        taxonomy_stats["duplicates_dropped"] == 1 and taxonomy_stats["stages"]["7"]["duplicates_dropped"] == 1
    )
    assert "dropped a repeat of row 4" in first.stderr
    words = pd.read_parquet(data / "vocab" / "words.parquet")  # banded: stage k = 4+k < AoA <= 5+k
    assert sorted(words["stage"].unique()) == list(STAGES)
    assert all(4 + s < aoa <= 5 + s for s, aoa in zip(words["stage"], words["aoa"], strict=True))
    seeds = pd.read_parquet(data / "seeds" / "seeds.parquet")
    contexts = pd.read_parquet(data / "generate" / "tables" / "context.parquet")
    cqa = pd.read_parquet(data / "generate" / "tables" / "cqa.parquet")
    assert len(contexts) > 0 and len(pd.read_parquet(data / "generate" / "tables" / "ir.parquet")) > 0
    # every CQA pair belongs to an accepted context, two pairs per context request
    assert set(cqa["context_id"]) <= set(contexts["instance_id"])
    assert (cqa.groupby("context_id").size() == 2).all()
    assert (data / "skill_graph" / "graph.graphml").is_file()
    gens = pd.read_parquet(data / "generate" / "generations.parquet")
    assert set(gens["seed_id"]) <= set(seeds["seed_id"])
    assert gens["model"].str.startswith("embedded@").all()
    # verify -> split -> release: a passage's questions share its split; every stage is released
    records = pd.read_parquet(data / "split" / "records.parquet")
    units = pd.read_parquet(data / "split" / "units.parquet").set_index("unit_id")
    assert (records["split"] == units.loc[records["unit_id"], "split"].to_numpy()).all()
    assert {"train", "test"} <= set(records["split"])
    for stage in STAGES:  # a file per split with records; each loads as docs/verify-split.md shows
        folder = data / "release" / "dataset" / f"stage_{stage}"
        splits = set(records.loc[records["stage"] == stage, "split"])
        assert {p.name for p in folder.iterdir()} == {f"{s}.parquet" for s in splits}
        loaded = load_dataset("parquet", data_dir=str(folder), cache_dir=str(tmp_path / "hf"))  # not ~/.cache
        assert {k: len(v) for k, v in loaded.items()} == records[records["stage"] == stage][
            "split"
        ].value_counts().to_dict()
    assert (data / "verify" / "plots" / "readability.csv").is_file()
    models = repo / "data" / "train" / "models"
    assert {p.name for p in models.iterdir()} == {"seed-42", "seed-43"}  # train.seeds
    assert {p.name for p in (models / "seed-43").iterdir()} == {"independent", "joint", "continual"}
    assert {p.name for p in (models / "seed-42" / "continual").iterdir()} == {"6", "6-7"}
    answers = pd.read_parquet(data / "evaluate" / "answers.parquet")  # evaluate.judge_seeds: 1
    assert set(answers["seed"]) == {42} and "seed-42/untrained" in set(answers["run"])
    metrics = json.loads((data / "evaluate" / "metrics.json").read_text())
    evaluated = metrics["orders"]
    assert set(evaluated) == {"independent", "joint", "continual"} and "FWT" in evaluated["continual"]["sum"]
    # the judge-free loss: every model on every held-out record of the evaluated types
    losses = pd.read_parquet(data / "evaluate" / "losses.parquet")
    held = records[
        records["split"].isin(["test", "validation"]) & records["type"].isin(["ir", "cqa", "csqa"])
    ]
    assert (
        len(losses) == len(held) * losses["run"].nunique() == len(held) * 2 * (6 + 1)
    )  # 2 seeds x 6 models + 1
    assert {"seed-42/untrained", "seed-43/untrained"} <= set(losses["run"])
    assert metrics["bootstrap"]["seeds"] == {"judge": [42], "loss": [42, 43]}
    assert set(metrics["loss"]) == {"independent", "joint", "continual"}
    assert (
        metrics["loss"]["continual"]["all"]["mean_nll"] > 0
        and "FGT_nll_rise" in metrics["loss"]["continual"]["all"]
    )
    assert (data / "evaluate" / "matrices" / "joint_minus_continual_sum.csv").is_file()
    assert "<img" in (data / "evaluate" / "report.html").read_text()

    second = dvc("repro", cwd=repo)
    assert ran(second.stdout) == set()

    # editing library code reruns the stages that import it, and no further when outputs match
    code = repo / "src" / "curll" / "seeds.py"
    code.write_text(code.read_text() + "\n# an edit that changes no output\n")
    assert ran(dvc("repro", cwd=repo).stdout) == {"seeds"}  # same seeds: generate stays

    # a profile no stage asks: a setting of it reruns nothing; its model, only its own llm_models stage
    params = load_yaml(repo / "params.yaml")
    params["llm"]["profiles"]["server"]["concurrency"] += 1
    dump_yaml(params, repo / "params.yaml")
    assert ran(dvc("repro", cwd=repo).stdout) == set()
    params["llm"]["profiles"]["server"]["model"] = "another/model"
    dump_yaml(params, repo / "params.yaml")
    assert ran(dvc("repro", cwd=repo).stdout) == {"llm_models@server"}
    # a new judge: every profile's stage (which profiles are in use changed), its own judge stage
    # and the panel; the other judges' stages stay (checked with `dvc status`, nothing is run)
    params["evaluate"]["judges"].append("server")
    dump_yaml(params, repo / "params.yaml")
    changed = set(json.loads(dvc("status", "--json", cwd=repo).stdout))
    judged = {"evaluate_judge@server", "evaluate_panel"}
    assert changed == {*(f"llm_models@{name}" for name in PROFILES), *judged}
    params["evaluate"]["judges"].remove("server")
    dump_yaml(params, repo / "params.yaml")
    assert ran(dvc("repro", cwd=repo).stdout) == set()

    # dvc metrics show: the headline only (a row per order and the judge's verdict) ...
    flat = dvc("metrics", "show", "--json", cwd=repo).stdout
    assert '"nll_lo"' in flat and '"gain_hi"' in flat and '"informative"' in flat
    assert "headline/continual.json" in flat and '"indicators"' not in flat and '"FGT"' not in flat
    # ... and every stage's own metrics still written beside its outputs
    flat = "".join(p.read_text() for p in data.rglob("*.json") if p.parent.name != "headline")
    assert '"indicators"' in flat and '"instances"' in flat and '"back_edges"' in flat
    assert '"dedup_pairs"' in flat and '"readability"' in flat and '"params_hash"' in flat
    # the continual order's forgetting; the judge and loss metrics with intervals
    assert (
        '"FGT"' in flat and '"AP_lo"' in flat and '"mean_nll_hi"' in flat and '"parse_failure_rate"' in flat
    )


def tracked_files(root: Path) -> dict[str, str]:
    """md5 of every file under data/ (DVC outputs, metrics and plots)."""
    return {
        str(p.relative_to(root)): hashlib.md5(p.read_bytes()).hexdigest()
        for p in sorted((root / "data").rglob("*"))
        if p.is_file()
    }


def test_evaluate_stops_naming_each_stage_and_type_short_of_test_items(reproduced: Reproduced, tmp_path):
    """Unless the params accept gaps, a matrix column without enough test items stops the stage,
    naming the stage, the type and where the items were lost; nothing is written."""
    repo = reproduced.path
    strict = load_yaml(repo / "params.yaml")
    strict["evaluate"].update(accept_gaps=False, min_items=10_000)
    dump_yaml(strict, tmp_path / "strict.yaml")
    metrics = (repo / "data" / "evaluate" / "metrics.json").read_bytes()
    proc = curll("evaluate", "run", "--params", str(tmp_path / "strict.yaml"), cwd=repo, check=False)
    assert proc.returncode == 2 and "evaluate.min_items" in proc.stderr, proc.stderr
    for stage in STAGES:
        for kind in ("ir", "cqa", "csqa"):
            assert re.search(
                rf"stage {stage} {kind}: \d+ scored test records \((\d+ generated|none)", proc.stderr
            )
    assert (repo / "data" / "evaluate" / "metrics.json").read_bytes() == metrics
    gaps = json.loads(metrics)["coverage"]  # the accepted run lists what it accepted
    assert gaps["min_items"] >= 5 and all(set(g) >= {"stage", "type", "test", "why"} for g in gaps["gaps"])


def test_push_then_pull_in_a_fresh_clone_restores_every_artifact(reproduced: Reproduced, tmp_path):
    repo = reproduced.path
    remote = tmp_path / "remote"
    dvc("remote", "add", "-f", "-d", "local", str(remote), cwd=repo)
    run(["git", "add", "-A"], cwd=repo)
    run(["git", "commit", "-qm", "release", "--allow-empty"], cwd=repo)
    dvc("push", cwd=repo)
    clone = tmp_path / "clone"
    run(["git", "clone", "-q", str(repo), str(clone)], cwd=tmp_path)
    assert not (clone / "data" / "release" / "dataset").exists()
    dvc("pull", cwd=clone)
    assert tracked_files(clone) == tracked_files(repo)
    assert "up to date" in dvc("status", cwd=clone).stdout


@pytest.mark.slow
def test_a_prompt_edit_and_a_ddp_experiment_rerun_only_their_stages(reproduced: Reproduced):
    """Slow (about 3 minutes on 2 cores: most of the pipeline runs again): editing one prompt
    reruns exactly the stages that render it and re-asks only its requests; `dvc exp run` of
    one order as two DDP processes reruns training and evaluation only."""
    repo = reproduced.path
    models = repo / "data" / "train" / "models"
    seeds = pd.read_parquet(repo / "data" / "seeds" / "seeds.parquet")
    ir_prompt = repo / "prompts" / "ir.j2"
    before = ir_prompt.read_text()
    ir_prompt.write_text(before.replace("practice exercises", "short practice exercises"))
    assert ir_prompt.read_text() != before
    edited = dvc("repro", cwd=repo)
    assert ran(edited.stdout) == GENERATED
    assert sent(edited.stdout + edited.stderr) == int((seeds["type"] == "ir").sum())

    run(["git", "add", "-A"], cwd=repo)
    run(["git", "commit", "-qm", "lock"], cwd=repo)
    # joint only, as two DDP processes (gloo on CPU) started by the stage through torchrun
    joint = dvc("exp", "run", "-S", "train.order=joint", "-S", "train.processes=2", cwd=repo)
    assert ran(joint.stdout) == {"train", *EVALUATE}  # training and evaluation only
    assert {p.name for p in (models / "seed-42" / "joint").iterdir()} == {"6", "6-7"} and not (
        models / "seed-42" / "continual"
    ).exists()
    assert json.loads((repo / "data" / "train" / "metrics.json").read_text())["processes"] == 2
    flat = dvc("metrics", "show", "--json", cwd=repo).stdout
    assert '"FGT"' not in flat and '"AP_lo"' in flat  # joint alone: no forgetting (models from scratch)
