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
  shared one (:func:`shard_cache`), and :func:`fold_shards` adds them into it. The shared
  file must not change while a shard reads it, and a shard's file must not be folded while
  it is written, so a shard job holds ``<shared>.lock`` shared and its own file's lock
  exclusive while it runs (:func:`shard_guard`), and a fold takes ``<shared>.lock``
  exclusive and refuses (:class:`~curll.llm.locks.BusyError`) while any shard job holds it;
- a file that is not a sound SQLite database (SQLite says corrupt or not a database at
  open, or ``PRAGMA quick_check`` fails: linear in the file, about a second a GB) is never
  trusted: it is moved aside as ``<name>.corrupt-<time>`` with a warning, and the cache
  starts empty (the answers are asked again). Any other failure (a full disk, a read-only
  or missing folder, no permission) is a :class:`~curll.errors.CurllError` naming the file
  (``cannot write: No space left on device``), and the cache is left as it was.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import quote

from curll.errors import CurllError
from curll.llm.locks import BusyError, hold
from curll.llm.types import Completion

#: SQLite's result codes for a file that is not a sound database: the only ones that set a
#: cache aside (a full disk is SQLITE_FULL, an unwritable folder SQLITE_CANTOPEN/READONLY)
_DAMAGED = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}

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
            if not _damaged(exc):
                raise _cannot(exc, self.path) from None
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
        """Connect, retrying while another process holds the file (two jobs creating one new
        cache at once: switching it to WAL needs a moment alone, and SQLite does not wait)."""
        deadline = time.monotonic() + self.busy_timeout_s
        while True:
            try:
                return self._connect()
            except sqlite3.OperationalError as exc:
                busy = getattr(exc, "sqlite_errorcode", 0) & 0xFF in _BUSY
                if not busy or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(_SCHEMA)
            verdict = db.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise _Unsound(f"quick_check: {verdict}")
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
        try:
            with self._db:  # one transaction, committed on exit (rolled back on failure)
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR IGNORE INTO completions VALUES (?,?,?,?,?,?,?,?)", rows)
        except sqlite3.OperationalError as exc:
            raise _cannot(exc, self.path) from None
        return len(rows)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def close(self) -> None:
        self._db.close()
        if self._base is not None:
            self._base.close()


class _Unsound(sqlite3.DatabaseError):
    """``PRAGMA quick_check`` found damage."""


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", 0)
    return isinstance(exc, _Unsound) or code & 0xFF in _DAMAGED  # extended codes: primary in the low byte


def _cannot(exc: sqlite3.DatabaseError, path: Path) -> CurllError:
    """The one-line error for a cache that is sound but cannot be used (disk, folder, rights)."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and _nearly_full(path)):
        return CurllError("cannot write: No space left on device", file=path)
    return CurllError(f"cannot use the request cache: {exc}", file=path)


def _nearly_full(path: Path) -> bool:
    """SQLite reports a failed write to its side files (``-shm``, ``-wal``) as an I/O error
    without the errno: a disk with under 64 KiB free is taken to be why."""
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024


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
            except sqlite3.OperationalError as exc:
                raise _cannot(exc, cache.path) from None
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


def _lock(path: str | Path) -> Path:
    return Path(f"{path}.lock")


def fold_shards(main: str | Path) -> tuple[int, int]:
    """:func:`fold` every shard cache of ``main`` (of any shard count) into it: (entries added,
    parts folded); (0, 0) when there is none. Raises :class:`~curll.llm.locks.BusyError` (and
    touches nothing) while a shard job runs over ``main`` (:func:`shard_guard`)."""
    m = Path(main)
    with hold(_lock(m), wait=False):
        name = re.compile(rf"{re.escape(m.stem)}-\d{{4,}}-of-\d{{4,}}{re.escape(m.suffix)}")
        parts = (
            sorted(p for p in (m.parent / "shards").iterdir() if name.fullmatch(p.name))
            if (m.parent / "shards").is_dir()
            else []
        )  # shard caches only: never their locks or a part set aside as corrupt
        return fold(m, parts) if parts else (0, 0)


@contextmanager
def shard_guard(main: str | Path, index: int, n: int) -> Iterator[Path]:
    """Hold what shard ``index`` of ``n`` needs while it runs; yields its cache file.

    ``main`` is held shared (a fold is refused while any shard job holds it; shards run side by
    side) and the shard's own file exclusive: a second job on the same shard (two runs at
    once, or a run beside `curll generate shard I`) is refused with a CurllError saying so,
    before it asks anything."""
    own = shard_cache(main, index, n)
    with hold(_lock(main), shared=True), ExitStack() as stack:
        try:
            stack.enter_context(hold(_lock(own), wait=False))
        except BusyError:
            raise CurllError(
                f"shard {index} of {n} is being generated by another process (its cache is in "
                "use); wait for that job to finish, or stop it",
                file=own,
            ) from None
        yield own


@contextmanager
def run_guard(main: str | Path) -> Iterator[None]:
    """Refuse a second whole run over ``main`` while one is working (a CurllError, nothing
    asked): two runs would otherwise meet shard by shard."""
    with ExitStack() as stack:
        try:
            stack.enter_context(hold(Path(f"{main}.run.lock"), wait=False))
        except BusyError:
            raise CurllError(
                "another `curll generate run` is working over this request cache; wait for it "
                "to finish, or stop it",
                file=main,
            ) from None
        yield
