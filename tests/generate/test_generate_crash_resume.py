"""kill -9 during `curll generate run` on the embedded model, restart: the output equals an
uninterrupted run's, row for row; shards run with caches of their own merge to the single run.

Marked slow (about 50 s): the default suite covers the same contracts on the OpenAI-compatible
backend in ``tests/faults`` (kill -9 through ``dvc repro``, two shard processes).
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from curll.yamlio import dump_yaml, load_yaml
from harness.commands import HANG, curll, env, on_random_model
from harness.kill import stored_answers

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

NEEDED = ["prompts", "src/curll/resources"]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with everything up to seeds built (stage 0 only, short outputs)."""
    dest = tmp_path_factory.mktemp("project")
    for name in NEEDED:
        shutil.copytree(ROOT / name, dest / name)
    params = on_random_model(load_yaml(ROOT / "params.yaml"))
    params["taxonomy"].update(stages=[0], per_stage=8)  # ~32 requests: enough to kill mid-run
    params["templates"].update(min_items=3, max_items=4)
    params["seeds"]["per_indicator"] = {"context": 1, "ir": 1}
    params["generate"]["pairs"] = {"cqa": 2, "csqa": 1}
    embedded = params["llm"]["profiles"]["embedded"]
    embedded.update(batch_size=4, max_chars={"long": 60, "short": 20})
    embedded["sampling"]["max_tokens"] = 160
    dump_yaml(params, dest / "params.yaml")
    for stage in ("taxonomy", "vocab", "llm_models", "templates", "seeds"):
        curll(stage, "run", *(["--profile", "embedded"] if stage == "llm_models" else []), cwd=dest)
    shutil.rmtree(dest / ".curll")  # the generate runs below start from an empty cache
    return dest


def shard(project: Path) -> pd.DataFrame:
    return pd.read_parquet(project / "data/generate/shards/generations-0000-of-0001.parquet")


def test_generate_resumes_after_sigkill(tmp_path, base):
    clean, crashed = tmp_path / "clean", tmp_path / "crashed"
    shutil.copytree(base, clean)
    shutil.copytree(base, crashed)

    full = curll("generate", "run", cwd=clean)
    total = int(re.search(r"(\d+) sent to the model", full.stderr).group(1))  # type: ignore[union-attr]

    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline.tools.cli", "generate", "run"],
        cwd=crashed, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + HANG  # waits for progress, however slow the machine
    while stored_answers(crashed) < 8 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL, "the run ended before it could be killed"
    stored = stored_answers(crashed)
    assert 0 < stored < total
    assert not (crashed / "data/generate/shards/generations-0000-of-0001.parquet").exists()

    resumed = curll("generate", "run", cwd=crashed)
    asked = int(re.search(r"(\d+) sent to the model", resumed.stderr).group(1))  # type: ignore[union-attr]
    assert asked <= total - stored  # nothing stored is asked again
    pd.testing.assert_frame_equal(shard(crashed), shard(clean))


def test_shards_run_separately_merge_to_the_single_run(tmp_path, base):
    n = 2
    single, split = tmp_path / "single", tmp_path / "split"
    shutil.copytree(base, single)
    shutil.copytree(base, split)
    curll("generate", "run", cwd=single)
    curll("generate_merge", "run", cwd=single)
    params = load_yaml(split / "params.yaml")
    params["generate"]["shards"] = n
    dump_yaml(params, split / "params.yaml")
    for i in range(n):  # as n machines would, each with its own cache
        curll("generate", "shard", str(i), cwd=split)
        shutil.rmtree(split / ".curll")
    curll("generate_merge", "run", cwd=split)
    for table in ("generations", "tables/context", "tables/cqa"):
        a = pd.read_parquet(single / f"data/generate/{table}.parquet")
        b = pd.read_parquet(split / f"data/generate/{table}.parquet")
        pd.testing.assert_frame_equal(a, b)
