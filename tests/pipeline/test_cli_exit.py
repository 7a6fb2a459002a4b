"""The ``curll`` console script's end (:func:`pipeline.tools.cli.entry`,
:mod:`pipeline.tools.fast_exit`): it skips Python's final teardown, and keeps what a normal exit
does before it: the status, atexit handlers, buffered output (Python's and C's), the wait for
threads still working, and the normal exit wherever that cannot be kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: an object whose finaliser writes a file: it runs in Python's teardown, which entry() skips
#: (by os calls bound early: open and the like may be gone by the time it runs)
FINALISED = (
    "import os\nclass Mark:\n"
    "    def __del__(self, op=os.open, write=os.write, flags=os.O_WRONLY | os.O_CREAT):\n"
    "        write(op({path!r}, flags), b'finalised')\nmark = Mark()"
)


def entry(setup: str, *argv: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    """A child that runs ``setup`` then ``curll ARGV`` through entry(); stdout a pipe, block
    buffered (PYTHONUNBUFFERED, if the machine sets it, removed) unless ``kw`` says otherwise."""
    run = f"from pipeline.tools.cli import entry\nsys.argv = ['curll', *{argv!r}]\nentry()\n"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    kw.setdefault("stdout", subprocess.PIPE)
    code = f"import sys\n{setup}\n{run}"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True, **kw
    )


def test_the_status_is_mains_and_atexit_handlers_and_buffered_output_are_kept():
    setup = "import atexit\natexit.register(lambda: print('handler ran'))\nprint('buffered', end='')"
    ok = entry(setup, "params")
    assert ok.returncode == 0 and ok.stdout.startswith("buffered{") and ok.stdout.endswith("handler ran\n")
    bad = entry(setup, "no-such-command")
    assert bad.returncode == 2 and bad.stdout == "bufferedhandler ran\n"
    assert bad.stderr.strip() == "error: No such command 'no-such-command'. (see curll --help)"


def test_what_c_code_printed_is_flushed_too(tmp_path: Path):
    out = tmp_path / "out.txt"
    with out.open("w") as stdout:  # a file: libc buffers it whole until the exit flushes it
        printf = "import ctypes\nctypes.CDLL(None).printf(b'from C\\n')"
        proc = entry(printf, "no-such-command", stdout=stdout)
    assert proc.returncode == 2 and out.read_text() == "from C\n"


def test_the_teardown_is_skipped_unless_a_tracer_is_at_work(tmp_path: Path):
    mark = tmp_path / "mark.txt"
    assert entry(FINALISED.format(path=str(mark)), "params").returncode == 0
    assert not mark.exists()  # no teardown: what bench.exit measures
    traced = "sys.settrace(lambda *a: None)\n" + FINALISED.format(path=str(mark))  # coverage, a debugger
    assert entry(traced, "params").returncode == 0
    assert mark.read_text() == "finalised"


def test_a_thread_still_working_is_waited_for(tmp_path: Path):
    out = tmp_path / "late.txt"
    setup = (
        "import threading, time\n"
        f"threading.Thread(target=lambda: (time.sleep(1.0), open({str(out)!r}, 'w').write('done'))).start()"
    )
    proc = entry(setup, "no-such-command")
    assert proc.returncode == 2 and out.read_text() == "done"


def test_a_failed_flush_is_reported_with_pythons_status_120_and_a_closed_stdout_is_skipped():
    with open("/dev/full", "w") as full:  # noqa: PTH123  # every write: no space left on the device
        proc = entry("print('lost')", "no-such-command", stdout=full)  # the print, buffered, fails at exit
    assert proc.returncode == 120 and "No space left on device" in proc.stderr
    closed = entry("", "deps", "--check", stdout=None, preexec_fn=lambda: os.close(1))  # sys.stdout is None
    assert closed.returncode == 0, closed.stderr


def test_an_exception_main_does_not_handle_keeps_its_traceback_and_status_1():
    setup = "import pipeline.tools.cli as cli\ndef boom(): raise RuntimeError('planted')\ncli.main = boom"
    proc = entry(setup)
    assert proc.returncode == 1 and "RuntimeError: planted" in proc.stderr and "Traceback" in proc.stderr
