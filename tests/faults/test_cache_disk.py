"""A request cache that cannot be written (a full disk) is an error naming the file, exit 2,
and the cache is kept as it was: only a damaged file is ever set aside. The full disk is a
small tmpfs (needs root and mount rights; skipped elsewhere); SQLite's own size cap stands in
for it where no tmpfs can be mounted."""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from curll.errors import CurllError
from curll.llm.cache import RequestCache
from curll.llm.types import Completion
from curll.yamlio import dump_yaml, load_yaml
from harness.mix import FaultyServer
from harness.project import make_project, run_generate


def answers(prefix: str, n: int) -> list[tuple[str, Completion]]:
    return [(f"{prefix}{i}", Completion("an answer " * 50, 10, 50, 0.1, "stop")) for i in range(n)]


def keys(path: Path) -> list[str]:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return sorted(k for (k,) in db.execute("SELECT key FROM completions"))


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "disk"
    folder.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def fill(folder: Path) -> None:
    filler = f"of={folder / 'filler'}"
    subprocess.run(["dd", "if=/dev/zero", filler, "bs=4k", "count=1000"], capture_output=True)


def test_a_full_disk_keeps_a_healthy_cache_and_says_why(small_disk):
    path = small_disk / "llm.sqlite"
    cache = RequestCache(path)
    cache.put_many("m", answers("k", 40))
    cache.close()
    before = path.read_bytes()
    fill(small_disk)
    with pytest.raises(CurllError, match="cannot write: No space left on device") as caught:
        cache = RequestCache(path)
        cache.put_many("m", answers("new", 40))
    assert str(path) in str(caught.value)
    assert path.read_bytes() == before
    (small_disk / "filler").unlink()  # reading needs room for SQLite's side files
    assert len(keys(path)) == 40
    assert not list(small_disk.glob("*.corrupt-*"))


def test_the_generate_stage_on_a_full_cache_disk_exits_2_and_keeps_the_cache(small_disk, tmp_path):
    with FaultyServer(rate=0.0) as server:
        project = make_project(tmp_path / "p", server.base_url)
        params = load_yaml(project / "params.yaml")
        params["llm"]["cache"] = str(small_disk / "llm.sqlite")
        dump_yaml(params, project / "params.yaml")
        assert run_generate(project).returncode == 0  # the shard's cache lies on the small disk too
        stored = keys(small_disk / "llm.sqlite")
        params["generate"]["pairs"]["cqa"] = 3  # new requests to store
        dump_yaml(params, project / "params.yaml")
        fill(small_disk)
        run = run_generate(project)
    (small_disk / "filler").unlink()
    assert run.returncode == 2 and "Traceback" not in run.output, run.output
    assert "cannot write: No space left on device" in run.output
    assert keys(small_disk / "llm.sqlite") == stored and stored
    assert not list(small_disk.rglob("*.corrupt-*"))


def test_a_write_past_sqlites_size_cap_is_the_same_one_line_error(tmp_path):
    path = tmp_path / "llm.sqlite"
    cache = RequestCache(path)
    cache.put_many("m", answers("k", 5))
    cache._db.execute("PRAGMA max_page_count = 3")  # SQLite answers SQLITE_FULL, as on a full disk
    with pytest.raises(CurllError, match="cannot write: No space left on device"):
        cache.put_many("m", answers("new", 200))
    cache.close()
    assert len(keys(path)) == 5 and not list(tmp_path.glob("*.corrupt-*"))
