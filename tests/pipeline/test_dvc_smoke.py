"""End-to-end: the real pipeline through real DVC in a temporary git repo."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers import dvc, run

ROOT = Path(__file__).resolve().parents[2]
COPY = ["dvc.yaml", "params.yaml", ".dvcignore", ".dvc/config", "src", "pipeline"]
IGNORE = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")


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
    (dest / ".dvc" / ".gitignore").write_text("/config.local\n/tmp\n/cache\n")
    run(["git", "init", "-q"], cwd=dest)
    run(["git", "add", "-A"], cwd=dest)
    run(["git", "commit", "-qm", "pipeline"], cwd=dest)
    return dest


def ran(output: str) -> set[str]:
    return {line.split("'")[1] for line in output.splitlines() if line.startswith("Running stage '")}


def test_repro_then_nothing_to_do_then_experiment_reruns_only_vocab(repo):
    first = dvc("repro", cwd=repo)
    assert ran(first.stdout) == {"taxonomy", "vocab"}
    assert pd.read_parquet(repo / "data" / "taxonomy" / "indicators.parquet")["stage"].nunique() == 5

    second = dvc("repro", cwd=repo)
    assert ran(second.stdout) == set()
    assert "up to date" in second.stdout

    run(["git", "add", "-A"], cwd=repo)
    run(["git", "commit", "-qm", "lock"], cwd=repo)
    exp = dvc("exp", "run", "-S", "vocab.max_per_stage=5", cwd=repo)
    assert ran(exp.stdout) == {"vocab"}
    words = pd.read_parquet(repo / "data" / "vocab" / "words.parquet")
    assert words.groupby("stage").size().max() == 5

    metrics = json.loads(dvc("metrics", "show", "--json", cwd=repo).stdout)
    flat = json.dumps(metrics)
    assert '"indicators"' in flat and '"words": 5' in flat
