"""kill -9 while ``dvc repro`` trains (DVC and ``curll train run`` under it), then ``dvc repro``
again: every saved model is byte-identical to an uninterrupted run's, no temporary file is left,
and the restart begins at the last checkpoint (it redoes at most ``checkpoint_every`` steps)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from curll.artifacts import write_table
from curll.schemas import RecordSchema
from curll.yamlio import dump_yaml, load_yaml
from harness.commands import curll, dvc
from harness.kill import kill_when, leftovers
from harness.project import under_dvc

pytestmark = pytest.mark.slow  # see docs/tests.md: over the default run's time budget

STAGE = """\
stages:
  train:
    cmd: curll train run
    deps: [data/split/records.parquet, data/tokenizer]
    params: [train]
    outs: [data/train/models]
    metrics: [{data/train/metrics.json: {cache: false}}]
"""

ROOT = Path(__file__).resolve().parents[2]


def hx(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def records() -> pd.DataFrame:
    rows = []
    for stage in (0, 1):
        for i in range(14):
            q, a = f"How many legs do {i + 2} birds have?", f"{i + 2} birds have {2 * (i + 2)} legs."
            rows.append({
                "record_id": hx(f"{stage}-{i}"), "unit_id": hx(f"u{stage}-{i}"), "stage": stage,
                "indicator_id": hx(f"ind{stage}"), "skill": "Maths", "subskill": "Counting",
                "indicator": "Counts in twos", "type": "ir", "split": "validation" if i < 2 else "train",
                "messages": json.dumps([{"role": "user", "content": q}, {"role": "assistant", "content": a}]),
            })  # fmt: skip
    return pd.DataFrame(rows, columns=list(RecordSchema.to_schema().columns))


def models(project: Path) -> dict[str, str]:
    root = project / "data" / "train" / "models"
    return {str(p.relative_to(root)): hashlib.md5(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A project with records and tokenizer (copied before training) and its models' md5s."""
    root = tmp_path_factory.mktemp("train-kill")
    project = root / "ref"
    params = load_yaml(ROOT / "params.yaml")
    params["tokenizer"]["vocab_size"] = 300
    params["evaluate"]["infer"]["prompt_tokens"] = 32  # + max_tokens: within train.context
    params["evaluate"]["infer"]["sampling"]["max_tokens"] = 32
    params["train"].update(order=["continual"], stages=[0, 1], context=64, batch=4, micro_batch=2,
                           epochs=3, checkpoint_every=2, device="cpu", seeds=[42])  # fmt: skip
    project.mkdir()
    dump_yaml(params, project / "params.yaml")
    write_table(records(), project / params["split"]["out"]["records"], RecordSchema)
    curll("tokenizer", "run", cwd=project)
    under_dvc(project, STAGE)
    shutil.copytree(project, root / "pristine")
    dvc("repro", cwd=project)
    return root / "pristine", models(project)


def test_train_killed_after_a_checkpoint_resumes_to_the_same_bytes(trained, tmp_path):
    pristine, expected = trained
    project = tmp_path / "p"
    shutil.copytree(pristine, project)
    ckpts = project / ".curll" / "checkpoints"
    killed = kill_when(["dvc", "repro"], project, lambda: any(ckpts.rglob("*.pt")))
    assert killed, "training finished before the kill"
    restart = dvc("repro", cwd=project)
    assert models(project) == expected and len(expected) > 0
    assert leftovers(project) == []
    first = re.search(
        r"train seed-42/continual/0:\s+\d+%\|[^|]*\|\s*(\d+)/(\d+)", restart.stdout + restart.stderr
    )
    assert first is not None and 0 < int(first.group(1)) < int(first.group(2))  # resumed mid-run
