"""Advisory file locks (``flock``) that say who waits for whom: the request caches' guards.

Contract of :func:`hold`:
- locks the file ``path`` (created empty if missing, never deleted: removing a lock file
  while another process waits on it would let two holders in) for the ``with`` block,
  shared or exclusive; with ``wait=False`` a lock held elsewhere raises :class:`BusyError`
  at once instead of waiting;
- the kernel drops the lock when its holder exits, ``kill -9`` included, so a crashed job
  never leaves a stale lock behind;
- locks are per open file, so two ``hold`` blocks in one process exclude each other like
  two processes would. On NFS, Linux emulates ``flock`` with POSIX byte-range locks, which
  the server arbitrates across machines.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class BusyError(Exception):
    """The lock is held by another process (or another block of this one)."""


@contextmanager
def hold(path: str | Path, *, shared: bool = False, wait: bool = True) -> Iterator[None]:
    """Hold ``path``'s lock for the block (see the module docstring)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        try:
            fcntl.flock(fd, mode if wait else mode | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BusyError(str(p)) from None
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
