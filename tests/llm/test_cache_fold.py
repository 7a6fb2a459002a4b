"""Shard caches over a shared one: read through, written apart, folded back exactly once."""

from __future__ import annotations

import sqlite3

from curll.llm.cache import RequestCache, fold
from curll.llm.types import Completion


def answer(text: str) -> Completion:
    return Completion(text, 3, 4, 0.1, "stop")


def keys(path) -> list[str]:
    with sqlite3.connect(path) as db:
        return sorted(k for (k,) in db.execute("SELECT key FROM completions"))


def test_a_shard_cache_reads_the_shared_one_and_writes_only_its_own(tmp_path):
    main = RequestCache(tmp_path / "llm.sqlite")
    main.put_many("m", [("a", answer("A"))])
    main.close()
    before = (tmp_path / "llm.sqlite").read_bytes()
    own = RequestCache(tmp_path / "shards" / "llm-0000-of-0002.sqlite", base=tmp_path / "llm.sqlite")
    own.put_many("m", [("b", answer("B"))])
    assert {k: c.text for k, c in own.get_many(["a", "b", "c"]).items()} == {"a": "A", "b": "B"}
    own.close()
    assert (tmp_path / "llm.sqlite").read_bytes() == before  # the shared file is never written
    assert keys(tmp_path / "shards" / "llm-0000-of-0002.sqlite") == ["b"]


def test_fold_adds_every_entry_once_and_removes_the_parts(tmp_path):
    main = RequestCache(tmp_path / "llm.sqlite")
    main.put_many("m", [("a", answer("A")), ("shared", answer("old"))])
    main.close()
    parts = [tmp_path / "shards" / f"llm-{i:04d}-of-0002.sqlite" for i in range(2)]
    for i, part in enumerate(parts):
        cache = RequestCache(part)
        cache.put_many(
            "m", [(f"k{i}-{j}", answer(f"{i}{j}")) for j in range(50)] + [("shared", answer("new"))]
        )
        cache.close()
    added, folded = fold(tmp_path / "llm.sqlite", parts)
    assert (added, folded) == (100, 2) and not any(p.exists() for p in parts)
    assert len(keys(tmp_path / "llm.sqlite")) == 102  # a, shared and 2 x 50
    assert RequestCache(tmp_path / "llm.sqlite").get_many(["shared"])["shared"].text == "old"  # kept
    assert fold(tmp_path / "llm.sqlite", parts) == (0, 0)  # nothing left: a second fold is a no-op


def test_a_damaged_part_is_moved_aside_and_the_rest_folded(tmp_path):
    good = tmp_path / "shards" / "llm-0000-of-0002.sqlite"
    cache = RequestCache(good)
    cache.put_many("m", [("g", answer("G"))])
    cache.close()
    bad = tmp_path / "shards" / "llm-0001-of-0002.sqlite"
    bad.write_bytes(b"not a database at all" * 100)
    import pytest

    with pytest.warns(UserWarning, match="not a sound cache database"):
        added, folded = fold(tmp_path / "llm.sqlite", [good, bad])
    assert (added, folded) == (1, 2) and keys(tmp_path / "llm.sqlite") == ["g"]
    assert list((tmp_path / "shards").glob("llm-0001-of-0002.sqlite.corrupt-*"))
