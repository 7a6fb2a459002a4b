"""End-to-end: the real pipeline through real DVC in a temporary git repo.

The default params run as they are, except for sizes shrunk so the whole pipeline (with
the embedded tiny model) takes well under a minute: stages 0-1, one seed per indicator
and type, short outputs.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from tests.helpers import dvc, on_random_model, run

ROOT = Path(__file__).resolve().parents[2]
COPY = ["dvc.yaml", "params.yaml", ".dvcignore", ".dvc/config", "src", "pipeline", "prompts"]
IGNORE = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
EVALUATE = {"evaluate_infer", "evaluate_judge", "evaluate"}
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
ALL_STAGES = {
    "taxonomy",
    "vocab",
    "llm_models",
    "skill_graph",
    "templates",
    "seeds",
    "verify_encoder",
    *GENERATED,
}


def shrink(params: dict[str, Any]) -> dict[str, Any]:
    on_random_model(params)
    params["taxonomy"].update(stages=[0, 1], per_stage=3)
    params["templates"].update(min_items=3, max_items=4)
    params["seeds"]["per_indicator"] = {"context": 2, "ir": 2}  # an IR unit for test, one for train
    params["verify"]["readability"]["sample"] = 20
    params["verify_encoder"]["pca_dims"] = 32
    params["split"].update(val_per_indicator=0, max_holdout=1.0)  # 1-2 units per indicator: no cap
    params["tokenizer"]["vocab_size"] = 400
    params["train"].update(stages=[0, 1], context=128, batch=4, micro_batch=2)
    params["evaluate"]["infer"]["prompt_tokens"] = 96  # + max_tokens: within train.context
    params["evaluate"]["infer"]["sampling"]["max_tokens"] = 32
    params["evaluate"]["max_per_type"] = 2
    params["evaluate"]["rubric"]["enabled"] = True  # off by default (judge time): keep it covered
    params["skill_graph"]["neighbours"] = 1
    params["generate"].update(cqa_pairs=2, csqa_pairs=1)
    embedded = params["llm"]["profiles"]["embedded"]
    embedded.update(batch_size=32, max_chars={"long": 80, "short": 30})
    embedded["sampling"]["max_tokens"] = 200
    return params


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    dest: Path = tmp_path_factory.mktemp("pipeline")
    for name in COPY:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=IGNORE)
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    params = yaml.safe_load((dest / "params.yaml").read_text())
    (dest / "params.yaml").write_text(yaml.safe_dump(shrink(params), sort_keys=False))
    (dest / ".dvc" / ".gitignore").write_text("/config.local\n/tmp\n/cache\n")
    (dest / ".gitignore").write_text(".curll/\n")
    run(["git", "init", "-q"], cwd=dest)
    run(["git", "add", "-A"], cwd=dest)
    run(["git", "commit", "-qm", "pipeline"], cwd=dest)
    return dest


def ran(output: str) -> set[str]:
    return {line.split("'")[1] for line in output.splitlines() if line.startswith("Running stage '")}


def sent(output: str) -> int:
    """Requests the generate stage sent to the model (the rest came from the cache)."""
    return sum(int(n) for n in re.findall(r"(\d+) sent to the model", output))


def test_repro_generates_everything_then_reruns_only_what_changed(repo):
    first = dvc("repro", cwd=repo)
    assert ran(first.stdout) == ALL_STAGES
    data = repo / "data"
    assert pd.read_parquet(data / "taxonomy" / "indicators.parquet")["stage"].nunique() == 2
    seeds = pd.read_parquet(data / "seeds" / "seeds.parquet")
    contexts = pd.read_parquet(data / "generate" / "contexts.parquet")
    cqa = pd.read_parquet(data / "generate" / "cqa.parquet")
    assert len(contexts) > 0 and len(pd.read_parquet(data / "generate" / "ir.parquet")) > 0
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
    for stage in (0, 1):
        assert {p.name for p in (data / "release" / "dataset" / f"stage_{stage}").iterdir()} == {
            "train.parquet",
            "validation.parquet",
            "test.parquet",
        }
    assert (data / "verify" / "plots" / "readability.csv").is_file()

    second = dvc("repro", cwd=repo)
    assert ran(second.stdout) == set()

    # editing one prompt reruns exactly the stages that render it, and re-asks only its requests
    ir_prompt = repo / "prompts" / "ir.j2"
    before = ir_prompt.read_text()
    ir_prompt.write_text(before.replace("practice exercises", "short practice exercises"))
    assert ir_prompt.read_text() != before
    third = dvc("repro", cwd=repo)
    assert ran(third.stdout) == GENERATED
    assert sent(third.stdout + third.stderr) == int((seeds["type"] == "ir").sum())

    run(["git", "add", "-A"], cwd=repo)
    run(["git", "commit", "-qm", "lock"], cwd=repo)
    exp = dvc("exp", "run", "-S", "seeds.seed=7", cwd=repo)
    assert ran(exp.stdout) == {"seeds", *GENERATED}
    models = repo / "data" / "train" / "models"
    assert {p.name for p in models.iterdir()} == {"independent", "joint", "continual"}
    assert {p.name for p in (models / "continual").iterdir()} == {"0", "0-1"}
    evaluated = json.loads((data / "evaluate" / "metrics.json").read_text())["orders"]
    assert set(evaluated) == {"independent", "joint", "continual"} and "FWT" in evaluated["continual"]["sum"]
    assert (data / "evaluate" / "matrices" / "joint_minus_continual_sum.csv").is_file()
    assert "<img" in (data / "evaluate" / "report.html").read_text()
    # joint only, as two DDP processes (gloo on CPU) started by the stage through torchrun
    joint = dvc("exp", "run", "-S", "train.order=joint", "-S", "train.processes=2", cwd=repo)
    assert ran(joint.stdout) == {"train", *EVALUATE}  # training and evaluation only
    assert {p.name for p in (models / "joint").iterdir()} == {"0", "0-1"} and not (
        models / "continual"
    ).exists()
    assert json.loads((repo / "data" / "train" / "metrics.json").read_text())["processes"] == 2

    metrics = json.loads(dvc("metrics", "show", "--json", cwd=repo).stdout)
    flat = json.dumps(metrics)
    assert '"indicators"' in flat and '"instances"' in flat and '"back_edges"' in flat
    assert '"dedup_pairs"' in flat and '"readability"' in flat and '"params_hash"' in flat
    assert '"FGT"' in flat and '"BWT"' in flat and '"parse_failure_rate"' in flat


def tracked_files(root: Path) -> dict[str, str]:
    """md5 of every file under data/ (DVC outputs, metrics and plots)."""
    return {
        str(p.relative_to(root)): hashlib.md5(p.read_bytes()).hexdigest()
        for p in sorted((root / "data").rglob("*"))
        if p.is_file()
    }


def test_push_then_pull_in_a_fresh_clone_restores_every_artifact(repo, tmp_path):
    if not (repo / "dvc.lock").is_file():
        dvc("repro", cwd=repo)
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
