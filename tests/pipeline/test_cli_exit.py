"""The ``curll`` console script's end (:func:`pipeline.tools.cli.entry`): it skips Python's final
teardown, and keeps what a normal exit does before it: the status, atexit handlers, buffered
output, and the wait for threads still working."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def entry(setup: str, *argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """A child that runs ``setup`` then ``curll ARGV`` through entry(), stdout a pipe."""
    run = f"from pipeline.tools.cli import entry\nsys.argv = ['curll', *{argv!r}]\nentry()\n"
    code = f"import sys\n{setup}\n{run}"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True)


def test_the_status_is_mains_and_atexit_handlers_and_buffered_output_are_kept():
    setup = "import atexit\natexit.register(lambda: print('handler ran'))\nprint('buffered', end='')"
    ok = entry(setup, "params")
    assert ok.returncode == 0 and ok.stdout.startswith("buffered{") and ok.stdout.endswith("handler ran\n")
    bad = entry(setup, "no-such-command")
    assert bad.returncode == 2 and bad.stdout == "bufferedhandler ran\n"
    assert bad.stderr.strip() == "error: No such command 'no-such-command'. (see curll --help)"


def test_a_thread_still_working_is_waited_for(tmp_path: Path):
    out = tmp_path / "late.txt"
    setup = (
        "import threading, time\n"
        f"threading.Thread(target=lambda: (time.sleep(1.0), open({str(out)!r}, 'w').write('done'))).start()"
    )
    proc = entry(setup, "no-such-command")
    assert proc.returncode == 2 and out.read_text() == "done"


def test_an_exception_main_does_not_handle_keeps_its_traceback_and_status_1(tmp_path: Path):
    setup = "import pipeline.tools.cli as cli\ndef boom(): raise RuntimeError('planted')\ncli.main = boom"
    proc = entry(setup)
    assert proc.returncode == 1 and "RuntimeError: planted" in proc.stderr and "Traceback" in proc.stderr
