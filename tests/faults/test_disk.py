"""A stage that cannot write (a full disk, a read-only folder) says so, naming the file, and
leaves its earlier output as it was. The shards folder is a small tmpfs (needs root and mount
rights; skipped elsewhere)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.kill import leftovers
from harness.mix import FaultyServer
from harness.project import make_project, run_generate

SHARD = "data/generate/shards/generations-0000-of-0001.parquet"


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, FaultyServer]]:
    """A generated project whose shards folder is a 512 KiB tmpfs holding the first run's shard."""
    with FaultyServer(rate=0.0) as server:
        project = make_project(tmp_path / "p", server.base_url)
        shards = project / "data" / "generate" / "shards"
        shards.mkdir(parents=True)
        mount = ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(shards)]
        if subprocess.run(mount, capture_output=True).returncode != 0:
            pytest.skip("cannot mount a tmpfs here (needs root)")
        try:
            assert run_generate(project).returncode == 0
            yield project, server
        finally:
            subprocess.run(["umount", str(shards)], check=True)


def test_a_read_only_output_folder(project):
    root, _ = project
    before = (root / SHARD).read_bytes()
    subprocess.run(["mount", "-o", "remount,ro", str(root / SHARD).rsplit("/", 1)[0]], check=True)
    run = run_generate(root)
    assert run.returncode == 2 and "Traceback" not in run.output
    assert f"{SHARD}: cannot write: Read-only file system" in run.output
    assert (root / SHARD).read_bytes() == before


def test_a_full_disk(project):
    root, _ = project
    before = (root / SHARD).read_bytes()
    filler = root / "data" / "generate" / "shards" / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k", "count=1000"], capture_output=True)
    run = run_generate(root)
    assert run.returncode == 2 and "Traceback" not in run.output
    assert f"{SHARD}: cannot write: No space left on device" in run.output
    assert (root / SHARD).read_bytes() == before
    assert leftovers(root) == []
