"""Content-addressed, crash-safe request cache on disk (SQLite, WAL).

Contract:
- keyed by :meth:`ChatRequest.key` (model, messages, sampling, schema, prompt version,
  attempt); values are the backend's :class:`Completion` fields;
- :meth:`RequestCache.put_many` commits before it returns: once a batch is stored, a
  ``kill -9`` cannot lose it, and a restarted run finds it and never asks again;
- failed completions (``error`` set) are never stored, so a rerun retries them;
- several processes (shards) may share one cache file: WAL mode, and a writer waits up
  to ``busy_timeout_s`` (default 600 s: a batch commit takes milliseconds, but a loaded
  shared disk can stall) for another's transaction instead of failing;
- ``base``: a second cache file consulted (read only, never locked: ``immutable``) for what
  this one lacks; shards of the generate stage each write a cache of their own over the
  shared one, and :func:`fold` adds them into it once every shard has finished (the shared
  file must not change while they run);
- a file that is not a sound SQLite database (truncated, overwritten, a failed
  ``PRAGMA quick_check`` at open, linear in the file: about a second a GB) is never
  trusted: it is moved aside as ``<name>.corrupt-<time>`` with a warning, and the cache
  starts empty (the answers are asked again).
"""

from __future__ import annotations

import sqlite3
import time
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import quote

from curll.llm.types import Completion

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    finish_reason TEXT NOT NULL,
    created REAL NOT NULL
)
"""


class RequestCache:
    def __init__(
        self, path: str | Path, *, busy_timeout_s: float = 600.0, base: str | Path | None = None
    ) -> None:
        self.path = Path(path)
        self._base: sqlite3.Connection | None = None
        if base is not None and Path(base).is_file():
            uri = f"file:{quote(str(Path(base).resolve()))}?mode=ro&immutable=1"
            self._base = sqlite3.connect(uri, uri=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.busy_timeout_s = busy_timeout_s
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as exc:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            warnings.warn(
                f"{self.path}: not a sound cache database ({exc}); moved to {aside.name}, starting empty",
                stacklevel=2,
            )
            for suffix in ("", "-wal", "-shm"):
                part = Path(f"{self.path}{suffix}")
                if part.exists():
                    part.replace(Path(f"{aside}{suffix}"))
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(_SCHEMA)
            verdict = db.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {verdict}")
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def get_many(self, keys: Sequence[str]) -> dict[str, Completion]:
        found = _lookup(self._db, keys)
        if self._base is not None:
            found.update(_lookup(self._base, [k for k in keys if k not in found]))
        return found

    def put_many(self, model: str, items: Iterable[tuple[str, Completion]]) -> int:
        rows = [
            (
                k,
                model,
                c.text,
                c.prompt_tokens,
                c.completion_tokens,
                c.latency_s,
                c.finish_reason,
                time.time(),
            )
            for k, c in items
            if c.error is None
        ]
        with self._db:  # one transaction, committed on exit
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR IGNORE INTO completions VALUES (?,?,?,?,?,?,?,?)", rows)
        return len(rows)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def close(self) -> None:
        self._db.close()
        if self._base is not None:
            self._base.close()


def _lookup(db: sqlite3.Connection, keys: Sequence[str]) -> dict[str, Completion]:
    found: dict[str, Completion] = {}
    for start in range(0, len(keys), 500):  # SQLite caps bound parameters per statement
        chunk = list(keys[start : start + 500])
        marks = ",".join("?" * len(chunk))
        rows = db.execute(
            "SELECT key, text, prompt_tokens, completion_tokens, latency_s, finish_reason "
            f"FROM completions WHERE key IN ({marks})",
            chunk,
        )
        for key, text, pt, ct, lat, fin in rows:
            found[key] = Completion(text, pt, ct, lat, fin)
    return found


def fold(main: str | Path, parts: Iterable[str | Path]) -> tuple[int, int]:
    """Add every entry of the cache files ``parts`` to ``main`` (an entry ``main`` holds is
    kept), then delete each part: (entries added, parts folded). One transaction per part, so
    a part killed mid-fold is folded again, whole, next time; a damaged part is moved aside
    (as :class:`RequestCache` does) and its answers are asked again."""
    cache = RequestCache(main)
    added = done = 0
    try:
        for part in parts:
            if not Path(part).is_file():
                continue
            RequestCache(part).close()  # checked (moved aside when damaged); its WAL written back
            if not Path(part).is_file():
                continue
            before = len(cache)
            cache._db.execute("ATTACH DATABASE ? AS part", (str(part),))
            try:
                with cache._db:
                    cache._db.execute("BEGIN")
                    cache._db.execute("INSERT OR IGNORE INTO completions SELECT * FROM part.completions")
            finally:
                cache._db.execute("DETACH DATABASE part")
            added += len(cache) - before
            done += 1
            for suffix in ("", "-wal", "-shm"):
                Path(f"{part}{suffix}").unlink(missing_ok=True)
    finally:
        cache.close()
    return added, done


def shard_cache(main: str | Path, index: int, n: int) -> Path:
    """The cache file shard ``index`` of ``n`` writes beside ``main`` (the shared cache, which
    it only reads): ``<main folder>/shards/<main name>-<i>-of-<n><suffix>``."""
    m = Path(main)
    return m.parent / "shards" / f"{m.stem}-{index:04d}-of-{n:04d}{m.suffix}"


def fold_shards(main: str | Path) -> tuple[int, int]:
    """:func:`fold` every shard cache of ``main`` (of any shard count) into it: (entries added,
    parts folded); (0, 0) when there is none."""
    m = Path(main)
    parts = sorted((m.parent / "shards").glob(f"{m.stem}-*-of-*{m.suffix}"))
    return fold(m, parts) if parts else (0, 0)
