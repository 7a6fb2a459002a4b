"""DVC's views fit a 120-column screen: dvc.yaml declares one small metrics folder (a row an
order in ``dvc metrics show``), every other metrics file is a plain output, and the README's
``dvc exp show`` command (exp show puts every param of params.yaml and every stage dep in a
column, with no setting to hide them: flags are needed) prints a readable table."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from curll.evaluate.headline import Headline, Judge, Order, metric_files

ROOT = Path(__file__).resolve().parents[2]


def _readme_exp_show() -> list[str]:
    """The README's ``dvc exp show`` line, as its shell would split it."""
    line = next(ln for ln in (ROOT / "README.md").read_text().splitlines() if ln.startswith("dvc exp show"))
    args = shlex.split(line, comments=True)[1:]  # without `dvc`
    return [*args[:2], "--no-pager", *args[2:]]


#: the README's command: the experiment, what -S changes, and the gate (every order's gain)
EXP_SHOW = _readme_exp_show()


def _declared(field: str) -> list[str]:
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    return [next(iter(e)) if isinstance(e, dict) else e
            for s in stages.values() for e in s.get("do", s).get(field, [])]  # fmt: skip


def test_the_headline_folder_is_the_only_metric_and_plots_are_top_level():
    assert _declared("metrics") == ["${evaluate.out.headline}"]
    assert _declared("plots") == [p for p in _declared("plots") if p.startswith("${verify.out.plots}")]
    top = yaml.safe_load((ROOT / "dvc.yaml").read_text())["plots"]
    names = [next(iter(p)) if isinstance(p, dict) else p for p in top]
    assert names == ["${evaluate.out.curves}", "${evaluate.out.plots}"]  # a chart per order file written


def _dvc(repo: Path, *args: str) -> str:
    env = {**os.environ, "COLUMNS": "120", "DVC_NO_ANALYTICS": "1"}
    done = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=repo, env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    return done.stdout


def test_metrics_show_and_the_readme_exp_show_fit_120_columns(tmp_path):
    """A tiny repo whose one stage writes the headline files with the widest values they take."""
    wide = (-10.123, -10.123, -10.123)
    orders = [Order(o, wide, wide, wide, -10.1, wide, False) for o in ("independent", "joint", "continual")]
    h = Headline(orders, False, [Judge("j", False, 0.5)])
    (tmp_path / "write.py").write_text(
        "import json, os, sys\nos.makedirs('data/evaluate/headline', exist_ok=True)\n"
        f"for n, v in {metric_files(h)!r}.items():\n"
        "    json.dump(v, open(f'data/evaluate/headline/{n}', 'w'))\n"
    )
    (tmp_path / "params.yaml").write_text((ROOT / "params.yaml").read_text())
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n  evaluate:\n    cmd: python write.py\n    deps: [write.py]\n"
        "    params: [train.order, train.budget]\n    metrics:\n      - ${evaluate.out.headline}:\n"
        "          cache: false\n"
    )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    _dvc(tmp_path, "init", "-q")
    _dvc(tmp_path, "repro", "-q")
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "run"], cwd=tmp_path, check=True)
    _dvc(tmp_path, "exp", "run", "-q", "-S", "train.order=[joint,continual]")
    shown = _dvc(tmp_path, "metrics", "show").splitlines()
    assert len(shown) == 5 and max(map(len, shown)) < 120, shown
    table = _dvc(tmp_path, *EXP_SHOW).splitlines()
    assert max(map(len, table)) < 120 and "\u2026" not in "".join(table), table
    assert "continual.json:gain" in "".join(table) and "['joint', 'continual']" in "".join(table)
    assert json.loads((tmp_path / "data/evaluate/headline/judge.json").read_text()) == {"informative": False}


def test_plots_show_draws_one_training_chart_per_order_the_run_trained(tmp_path):
    """dvc.yaml's own top-level plots, after a run of one order (``-S train.order=continual``):
    one training chart, and no error for the orders that were not run."""
    (tmp_path / "params.yaml").write_text((ROOT / "params.yaml").read_text())
    top = yaml.safe_load((ROOT / "dvc.yaml").read_text())["plots"]
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump({"plots": top}))
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _dvc(tmp_path, "init", "-q")
    (tmp_path / ".dvc" / "plots").mkdir(exist_ok=True)
    (tmp_path / ".dvc" / "plots" / "runs.json").write_text(
        (ROOT / ".dvc" / "plots" / "runs.json").read_text()
    )
    curves = tmp_path / "data" / "evaluate" / "curves"
    curves.mkdir(parents=True)
    (curves / "continual.csv").write_text(
        "run,step,loss\nseed-42/continual/0,1,7.5\nseed-42/continual/0,2,7.1\n"
    )
    shown = json.loads(_dvc(tmp_path, "plots", "show", "--json"))["data"]
    assert [k for k in shown if "curves" in k] == ["data/evaluate/curves/continual.csv"]
    assert not shown["data/evaluate/curves/continual.csv"][0].get("errors")
