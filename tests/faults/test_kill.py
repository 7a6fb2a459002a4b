"""kill -9 at seeded points of a ``dvc repro`` (the generate stage against a local server),
then ``dvc repro`` again: the outputs are byte-identical to an uninterrupted run's, no
temporary file is left, and the restart asks again at most the batch that was in flight."""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.commands import dvc
from harness.kill import kill_when, leftovers, stored_answers
from harness.mix import FaultyServer
from harness.project import make_project, under_dvc

SHARD = "data/generate/shards/generations-0000-of-0001.parquet"
BATCH = 4


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, bytes, int, FaultyServer]]:
    """An untouched copy of the project, the shard of an uninterrupted run, its request count,
    and the server that answered it, kept listening for the module's tests: the server is part
    of the model's name, so of every row, and a new server on the freed port could lose it."""
    root = tmp_path_factory.mktemp("kill")
    with FaultyServer(rate=0.0) as server:
        project = under_dvc(make_project(root / "ref", server.base_url, batch_size=BATCH, concurrency=1))
        pristine = root / "pristine"
        shutil.copytree(project, pristine)
        dvc("repro", cwd=project)
        yield pristine, (project / SHARD).read_bytes(), len(server.requests), server


@pytest.mark.parametrize("trial", [0, pytest.param(1, marks=pytest.mark.slow)])  # a second kill point: slow
def test_repro_killed_at_a_seeded_point_restarts_to_the_same_bytes(reference, tmp_path, trial):
    pristine, expected, total, server = reference
    at = random.Random(trial).randrange(BATCH, total - BATCH)  # answers stored when killed
    project = tmp_path / "p"
    shutil.copytree(pristine, project)
    server.latency_s = 0.02
    try:
        killed = kill_when(["dvc", "repro"], project, lambda: stored_answers(project) >= at)
        assert killed, "the run finished before the kill"
        stored = stored_answers(project)
        assert stored < total, "killed after the last answer: not mid-run"
        asked = len(server.requests)
        dvc("repro", cwd=project)
        again = len(server.requests) - asked
    finally:
        server.latency_s = 0.0
    assert (project / SHARD).read_bytes() == expected
    assert leftovers(project) == []
    assert again <= total - stored + BATCH  # at most the batch in flight is asked twice
