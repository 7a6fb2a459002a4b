"""kill -9 inside the LLM stages of split (quality ratings) and evaluation (the judges), in a
copy of the session's reproduced pipeline with its request cache removed (so the stage asks
the model again): ``dvc repro`` then gives byte-identical tables, leaves no temporary file, and
asks again at most the batch in flight."""

from __future__ import annotations

import random
import shutil

import pytest

from curll.yamlio import dump_yaml, load_yaml
from harness.commands import dvc
from harness.kill import cached_rows, kill_when, leftovers
from tests.repro import Reproduced

pytestmark = pytest.mark.slow  # see docs/tests.md: over the default run's time budget

BATCH = 4  # requests per backend call and cache commit here (the shrunk pipeline's is 32)
OUTPUTS = {
    "split": ["data/split/ratings.parquet", "data/split/units.parquet", "data/split/records.parquet"],
    "evaluate_judge@embedded": [
        "data/evaluate/panel/embedded/ratings.parquet",
        "data/evaluate/panel/embedded/rubric.parquet",
    ],
}


@pytest.mark.parametrize(
    "stage",
    # the judges' trial (about 30 s) is kept out of the default run: it exercises the engine's
    # cache and batches as split's does
    ["split", pytest.param("evaluate_judge@embedded", marks=pytest.mark.slow)],
)
def test_an_llm_stage_killed_mid_run_restarts_to_the_same_bytes(reproduced: Reproduced, tmp_path, stage):
    repo = tmp_path / "repo"
    shutil.copytree(reproduced.path, repo, symlinks=True)
    expected = {path: (repo / path).read_bytes() for path in OUTPUTS[stage]}
    params = load_yaml(repo / "params.yaml")
    params["llm"]["profiles"]["embedded"]["batch_size"] = BATCH  # not in any request's key
    dump_yaml(params, repo / "params.yaml")
    cache = repo / ".curll" / "cache" / "llm.sqlite"
    shutil.rmtree(cache.parent)
    forced = ["repro", "--force", "--single-item", stage]
    full = dvc(*forced, cwd=repo)  # from an empty cache, in batches of 4: the same bytes
    total = cached_rows(cache)
    assert total > BATCH, "too few requests to kill between batches"
    assert all((repo / p).read_bytes() == b for p, b in expected.items()), full.stdout
    shutil.rmtree(cache.parent)
    at = random.Random(stage).randrange(1, total // BATCH) * BATCH  # after a seeded batch
    assert kill_when(["dvc", *forced], repo, lambda: cached_rows(cache) >= at), "finished before the kill"
    stored = cached_rows(cache)
    assert stored < total
    dvc(*forced, cwd=repo)
    assert all((repo / p).read_bytes() == b for p, b in expected.items())
    assert cached_rows(cache) == total  # nothing stored twice, nothing lost
    assert leftovers(repo) == []
