"""Ending a ``curll`` process without Python's final teardown.

That teardown garbage-collects every object still alive: with torch and transformers loaded,
over a second a stage, for nothing (``python -m bench.exit``). :func:`run_then_exit` does
what a normal exit does before it, in the same order, then ends the process:

1. threads are waited for: where a non-daemon thread is still alive, the exit is the normal one;
2. atexit handlers run (logging's flush, multiprocessing's joins of its children, torch's);
3. Python's stdout and stderr are flushed, then C's (what a library printed through libc).

Where any of that cannot be done as Python would, the exit is the normal one: an exit status
that is not a number, a tracer or profiler at work (coverage, cProfile write their files at
teardown), or a flush that fails (Python then reports it and exits with status 120). What is
skipped is only the teardown itself: objects still alive are not finalised, so a file left open
in a global would not be flushed; curll's writers close their files in ``with`` blocks.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import NoReturn


def run_then_exit(main: Callable[[], object]) -> NoReturn:
    """``main()``, then the end above with its exit status (0 where it returns); an exception
    other than SystemExit propagates as it would (its traceback, status 1)."""
    status = 0
    try:
        main()
    except SystemExit as stop:
        code = 0 if stop.code is None else stop.code
        if not isinstance(code, int) or _threads_left() or _watched():
            raise
        status = code
    atexit._run_exitfuncs()
    if not _flushed():
        raise SystemExit(status)  # the normal exit reports the failed flush, with status 120
    with contextlib.suppress(Exception):  # no libc to flush (another platform): nothing buffered there
        import ctypes

        ctypes.CDLL(None).fflush(None)
    os._exit(status)


def _threads_left() -> bool:
    """Whether a thread other than this one would keep a normal exit waiting."""
    main_thread = threading.main_thread()
    return any(t is not main_thread and t.is_alive() and not t.daemon for t in threading.enumerate())


def _watched() -> bool:
    """Whether a tracer or profiler is set (they write their results at teardown)."""
    return sys.gettrace() is not None or sys.getprofile() is not None


def _flushed() -> bool:
    """Python's stdout and stderr flushed (a closed descriptor, None, is skipped as Python does)."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except Exception:
            return False
    return True
