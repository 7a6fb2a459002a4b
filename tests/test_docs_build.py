"""The docs site's build in ``make lint`` fails on a broken link: the command the Makefile runs,
on a copy of the docs with one anchor that does not exist."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_lint_docs_build_fails_on_a_missing_anchor(tmp_path):
    recipe = re.search(
        r"^\t(NO_MKDOCS_2_WARNING=1 mkdocs build[^\n]*)$", (ROOT / "Makefile").read_text(), re.M
    )
    assert recipe, "make lint no longer builds the docs"
    args = recipe[1].split()[1:]  # the mkdocs command and its options, as make runs them
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy2(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    mkdocs = [sys.executable, "-m", "mkdocs", *args[1:], "-d", str(tmp_path / "site")]
    page = tmp_path / "docs" / "tests.md"
    page.write_text(page.read_text() + "\n[a link](benchmarks.md#no-such-section)\n")
    broken = subprocess.run(mkdocs, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert broken.returncode != 0, broken.stdout + broken.stderr
    assert "no-such-section" in broken.stderr
