"""A generate-stage project against a faulty local server: prompts, params and seeds only
(no model: the server answers), so each run takes seconds."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from curll.artifacts import write_table
from curll.schemas import SeedSchema
from curll.yamlio import dump_yaml, load_yaml
from harness.commands import curll, dvc, run

#: the generate stage alone, for projects made by :func:`make_project`
STAGE = """\
stages:
  generate:
    cmd: curll generate run
    deps: [data/seeds/seeds.parquet, prompts]
    params: [llm, generate]
    outs: [data/generate/shards]
"""

ROOT = Path(__file__).resolve().parents[1]


def seeds(n: int) -> pd.DataFrame:
    """``n`` context seeds and ``n`` IR seeds over stages 0-1, each prompt its own."""
    rows = []
    for i in range(2 * n):
        kind = "context" if i < n else "ir"
        rows.append({
            "seed_id": hashlib.sha256(f"seed {i}".encode()).hexdigest()[:16],
            "indicator_id": hashlib.sha256(f"indicator {i % 3}".encode()).hexdigest()[:16],
            "stage": i % 2, "age_group": "5-6", "skill": "Language", "subskill": "Reading",
            "goal": "Understand simple stories", "indicator": f"Retells a short story in order ({i % 3})",
            "type": kind, "template": f"{'a short story' if kind == 'context' else 'a question'}, part {i}",
            "word": ["garden", "river", "apple", "window"][i % 4], "pos": "Noun",
        })  # fmt: skip
    return pd.DataFrame(rows, columns=list(SeedSchema.to_schema().columns))


def make_project(dest: Path, base_url: str, n_seeds: int = 4, **profile: object) -> Path:
    """A project folder whose ``llm.use`` is the ``server`` profile at ``base_url``."""
    shutil.copytree(ROOT / "prompts", dest / "prompts")
    params = load_yaml(ROOT / "params.yaml")
    params["llm"]["use"] = "server"
    params["split"]["rater"] = "server"
    server = params["llm"]["profiles"]["server"]
    # a short backoff: the tests' servers fail on purpose, and a retry's wait is not under test here
    server.update(
        base_url=base_url, timeout_s=2.0, max_retries=4, concurrency=4, batch_size=16, backoff_s=0.01
    )
    server.update(profile)
    params["generate"]["pairs"] = {"cqa": 2, "csqa": 1}
    dump_yaml(params, dest / "params.yaml")
    write_table(seeds(n_seeds), dest / params["seeds"]["out"]["seeds"], SeedSchema)
    return dest


def under_dvc(project: Path, pipeline: str = STAGE) -> Path:
    """``project`` as a git + DVC repo whose ``dvc.yaml`` is ``pipeline`` (default :data:`STAGE`)."""
    (project / "dvc.yaml").write_text(pipeline)
    (project / ".gitignore").write_text(".curll/\n")
    run(["git", "init", "-q"], cwd=project)
    dvc("init", "-q", cwd=project)
    run(["git", "add", "-A"], cwd=project)
    run(["git", "commit", "-qm", "project"], cwd=project)
    return project


@dataclass(frozen=True)
class StageRun:
    returncode: int
    output: str
    requests: int  #: generation requests (rows)
    ok: int
    sent: int  #: requests sent to the model (not from the cache)
    retries: int  #: further calls of the engine (new attempts)


def run_generate(project: Path) -> StageRun:
    proc: subprocess.CompletedProcess[str] = curll("generate", "run", cwd=project, check=False)
    out = proc.stdout + proc.stderr
    m = re.search(r"(\d+) requests, (\d+) ok, (\d+) sent to the model \(\+(\d+) retries\)", out)
    numbers = [int(x) for x in m.groups()] if m else [0, 0, 0, 0]
    return StageRun(proc.returncode, out, *numbers)
