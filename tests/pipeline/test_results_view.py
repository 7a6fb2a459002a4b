"""``curll results`` as a user meets it: from any folder, on any terminal width, on a broken
metrics file; and the table layout both result commands share (:mod:`pipeline.tools.tables`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from pipeline.tools.tables import fitted, stacked
from tests.evaluate.test_headline import METRICS
from tests.pipeline.test_cli import ROOT, curll_here


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    (tmp_path / "data" / "evaluate").mkdir(parents=True)
    (tmp_path / "data" / "evaluate" / "metrics.json").write_text(json.dumps(METRICS))
    return tmp_path


def test_results_read_the_run_next_to_the_params_file_from_any_folder(run_dir: Path):
    """Paths were taken from the working folder: from ``data/`` with ``--params ../params.yaml``
    it said "no results yet" beside a finished run."""
    done = curll_here("results", "--params", "../params.yaml", cwd=run_dir / "data")
    assert done.returncode == 0, done.stderr
    assert all(cell in done.stdout for cell in ("4.81", "[4.51, 5.12]", "0.49", "[0.25, 0.74]")), done.stdout


@pytest.mark.parametrize(
    "text", ["", "{not json", "[]", "<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> exp\n", '{"loss": []}']
)
def test_a_metrics_file_that_is_no_json_object_is_one_line_and_status_2(run_dir: Path, text: str):
    metrics = run_dir / "data" / "evaluate" / "metrics.json"
    metrics.write_text(text)
    done = curll_here("results", cwd=run_dir)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "data/evaluate/metrics.json" in line and "dvc repro" in line, line


@pytest.mark.parametrize("width", [80, 100, 120])
def test_results_fit_the_terminal_with_every_value_and_interval_whole(tmp_path: Path, width: int):
    """Every column was kept on one line: at 80 columns rich cut each cell to "4.85 [4.64, …" and
    dropped the last column."""
    from curll.evaluate.headline import COLUMNS, headline, rows

    console = Console(width=width, record=True)
    console.print(fitted(console, COLUMNS, rows(headline(METRICS, tmp_path))))
    text = console.export_text()
    assert max(map(len, text.splitlines())) <= width and "\u2026" not in text, text
    for cell in ("4.81", "[4.51, 5.12]", "[-0.47, 0.24]", "0.49", "[0.25, 0.74]", "5/5", "beats"):
        assert cell in text, (cell, text)


def test_a_narrow_table_stacks_intervals_and_folds_free_text_only():
    assert stacked("4.85 [4.64, 5.06]") == "4.85\n[4.64, 5.06]" and stacked("\u2013") == "\u2013"
    rows = [["main", "train.order=[independent, joint, continual]", "joint", "4.20 [3.94, 4.45]"]]
    console = Console(width=60, record=True)
    console.print(fitted(console, ["experiment", "params", "order", "NLL"], rows, fold={"params"}))
    text = console.export_text()
    assert max(map(len, text.splitlines())) <= 60 and "\u2026" not in text, text
    assert "[3.94, 4.45]" in text and "4.20" in text and "joint" in text
    tiny = Console(width=36, record=True)
    tiny.print(fitted(tiny, ["experiment", "params", "order", "NLL"], rows, fold={"params"}))
    left = "".join(tiny.export_text().split())  # too narrow for any layout: cells wrap, none is cut
    assert "4.20" in left and "4.45]" in left and "joint" in left and "\u2026" not in left, left
    wide = Console(width=200, record=True)
    wide.print(fitted(wide, ["experiment", "params", "order", "NLL"], rows, fold={"params"}))
    assert "4.20 [3.94, 4.45]" in wide.export_text()  # one line where it fits
