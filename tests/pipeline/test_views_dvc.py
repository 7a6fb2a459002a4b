"""DVC's views fit a 120-column screen: dvc.yaml declares one small metrics folder (a row an
order in ``dvc metrics show``), every other metrics file is a plain output, and the README's
``dvc exp show`` command (exp show puts every param of params.yaml and every stage dep in a
column, with no setting to hide them: flags are needed) prints a readable table; ``curll
experiments`` lays out the same experiments a row per experiment and order."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from curll.errors import CurllError
from curll.evaluate.headline import Headline, Judge, Order, metric_files
from curll.yamlio import dump_yaml, load_yaml

ROOT = Path(__file__).resolve().parents[2]


def _readme_exp_show() -> list[str]:
    """The README's ``dvc exp show`` line, as its shell would split it."""
    line = next(ln for ln in (ROOT / "README.md").read_text().splitlines() if ln.startswith("dvc exp show"))
    args = shlex.split(line, comments=True)[1:]  # without `dvc`
    return [*args[:2], "--no-pager", *args[2:]]


#: the README's command: the experiment, what -S changes, and the gate (every order's gain)
EXP_SHOW = _readme_exp_show()


def _declared(field: str) -> list[str]:
    stages = load_yaml(ROOT / "dvc.yaml")["stages"]
    return [next(iter(e)) if isinstance(e, dict) else e
            for s in stages.values() for e in s.get("do", s).get(field, [])]  # fmt: skip


def test_the_headline_folder_is_the_only_metric_and_plots_are_top_level():
    assert _declared("metrics") == ["${evaluate.out.headline}"]
    assert _declared("plots") == [p for p in _declared("plots") if p.startswith("${verify.out.plots}")]
    top = load_yaml(ROOT / "dvc.yaml")["plots"]
    names = [next(iter(p)) if isinstance(p, dict) else p for p in top]
    assert names == ["${evaluate.out.curves}", "${evaluate.out.plots}"]  # a chart per order file written


def _dvc(repo: Path, *args: str) -> str:
    env = {**os.environ, "COLUMNS": "120", "DVC_NO_ANALYTICS": "1"}
    done = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=repo, env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    return done.stdout


@pytest.fixture(scope="module")
def exp_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny repo whose one stage writes the headline files of the orders in ``train.order``,
    with the widest values they take; committed, then one experiment (``narrow``) run with two
    orders."""
    repo = tmp_path_factory.mktemp("views")
    wide = (-10.123, -10.123, -10.123)
    orders = [Order(o, wide, wide, wide, -10.1, wide, (0, 5)) for o in ("independent", "joint", "continual")]
    h = Headline(orders, False, [Judge("j", False, 0.5)])
    (repo / "write.py").write_text(
        "import json, os, yaml\nos.makedirs('data/evaluate/headline', exist_ok=True)\n"
        "order = yaml.safe_load(open('params.yaml'))['train']['order']\n"
        f"for n, v in {metric_files(h)!r}.items():\n"
        "    if n == 'judge.json' or n[:-5] in order:\n"
        "        json.dump(v, open(f'data/evaluate/headline/{n}', 'w'))\n"
    )
    (repo / "params.yaml").write_text((ROOT / "params.yaml").read_text())
    (repo / "dvc.yaml").write_text(
        f"stages:\n  evaluate:\n    cmd: {sys.executable} write.py\n    deps: [write.py]\n"
        "    params: [train.order, train.budget]\n    metrics:\n      - ${evaluate.out.headline}:\n"
        "          cache: false\n"
    )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=master"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    _dvc(repo, "init", "-q")
    _dvc(repo, "repro", "-q")
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "run"], cwd=repo, check=True)
    _dvc(repo, "exp", "run", "-q", "-n", "narrow", "-S", "train.order=[joint,continual]")
    return repo


def test_metrics_show_and_the_readme_exp_show_fit_120_columns(exp_repo: Path):
    shown = _dvc(exp_repo, "metrics", "show").splitlines()
    assert len(shown) == 4 and max(map(len, shown)) < 120, shown  # the workspace: two orders, the judge
    table = _dvc(exp_repo, *EXP_SHOW).splitlines()
    assert max(map(len, table)) < 120 and "\u2026" not in "".join(table), table
    assert "continual.json:gain" in "".join(table) and "['joint', 'continual']" in "".join(table)
    assert json.loads((exp_repo / "data/evaluate/headline/judge.json").read_text()) == {"informative": False}


def test_plots_show_draws_one_training_chart_per_order_the_run_trained(tmp_path):
    """dvc.yaml's own top-level plots, after a run of one order (``-S train.order=continual``):
    one training chart, and no error for the orders that were not run."""
    (tmp_path / "params.yaml").write_text((ROOT / "params.yaml").read_text())
    top = load_yaml(ROOT / "dvc.yaml")["plots"]
    dump_yaml({"plots": top}, tmp_path / "dvc.yaml")
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


def test_curll_experiments_shows_each_experiments_orders_and_the_params_that_differ(exp_repo: Path):
    env = {**os.environ, "DVC_NO_ANALYTICS": "1"}
    done = subprocess.run([sys.executable, "-m", "pipeline.tools.cli", "experiments"], cwd=exp_repo, env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    lines = done.stdout.splitlines()
    assert max(map(len, lines)) <= 120, lines
    head = lines[1]
    cut = [head.index(c) for c in ("params that differ", "order", "NLL", "gain", "judge")]
    seen: dict[str, dict[str, list[str]]] = {}
    for ln in lines[3:-1]:  # below the header rule, above the units line
        exp, params, order, nll, gain = (ln[a:b].strip() for a, b in zip([0, *cut[:-1]], cut, strict=True))
        if exp:
            row = seen.setdefault(exp, {"params": [], "orders": []})
        row["params"] += [params] if params else []
        if order:
            row["orders"].append(order)
            assert nll == gain == "-10.12 [-10.12, -10.12]", ln  # the file's NLL and gain, interval
    assert {k: (" ".join(v["params"]), v["orders"]) for k, v in seen.items()} == {
        "workspace": ("train.order=[joint, continual]", ["joint", "continual"]),
        "master": ("train.order=[independent, joint, continual]", ["independent", "joint", "continual"]),
        "narrow": ("train.order=[joint, continual]", ["joint", "continual"]),
    }, done.stdout
    assert done.stdout.count("failed") == 3  # the judge's verdict once an experiment


def test_experiments_at_80_columns_keep_every_params_value_and_interval(exp_repo: Path):
    """The "params that differ" column was squeezed to nothing at 80 columns, header and all."""
    from rich.console import Console

    from pipeline.tools.experiments import COLUMNS, dvc_exp_show, experiments, table_rows
    from pipeline.tools.tables import fitted

    rows = table_rows(experiments(dvc_exp_show(exp_repo), "data/evaluate/headline"))
    console = Console(width=80, record=True)
    console.print(fitted(console, COLUMNS, rows, fold={COLUMNS[1]}))
    lines = console.export_text().splitlines()
    assert max(map(len, lines)) <= 80 and "\u2026" not in "".join(lines), lines
    a, b = lines[0].index("params that"), lines[1].index("order")  # the column, from its header
    column = "".join(ln[a:b] for ln in lines[3:]).replace(" ", "")
    assert "train.order=[independent,joint,continual]" in column, lines
    assert "[-10.12, -10.12]" in "".join(lines)


def test_a_key_one_experiment_lacks_is_absent_and_files_of_untrained_orders_are_noted():
    from pipeline.tools.experiments import Experiment, notes, table_rows

    head: dict[str, dict[str, Any]] = {
        "joint.json": {"nll": 4.2},
        "continual.json": {"nll": 4.8},
        "judge.json": {"informative": False},
    }
    rows = [Experiment("workspace", {"train.order": ["continual"], "foo.bar": 1}, head),
            Experiment("main", {"train.order": ["joint", "continual"]}, head)]  # fmt: skip
    said = [r[1] for r in table_rows(rows) if r[1]]
    assert said == ["train.order=[continual]\nfoo.bar=1", "train.order=[joint, continual]\nfoo.bar (absent)"]
    [note] = notes(rows, Path("params.yaml"), None)
    assert note.startswith("workspace: joint not in its train.order: files left by another experiment")
    scored = Experiment(
        "ws", {"train.order": ["continual"], "evaluate.checkpoints.models": [{"path": "a"}]}, head
    )
    assert notes([scored], Path("params.yaml"), None) == []  # checkpoints: their orders are their own


def test_a_failed_or_queued_experiment_shows_its_params_and_no_results():
    """DVC shows a failed or queued experiment with the params it was given and the metrics of
    the commit it started from: those are not its results."""
    from pipeline.tools.experiments import experiments, table_rows

    def state(rev: str, name: str | None, lr: float, gain: float, error: bool = False) -> dict[str, Any]:
        params = {"params.yaml": {"data": {"train": {"lr": lr, "seeds": [42, 43]}}}}
        metrics = {"h/zz-unregistered.json": {"data": {"nll": 6.0}},
                   "h/continual.json": {"data": {"nll": 5.0, "gain": gain, "gain_lo": 0.1, "gain_hi": 0.3}},
                   "other/continual.json": {"data": {"nll": 9.0}}}  # fmt: skip
        return {"rev": rev, "name": name, "data": {"params": params, "metrics": metrics},
                "error": {"msg": "stage failed"} if error else None}  # fmt: skip

    groups = [
        {"revs": [state("1234567aa", "hot", 0.01, 0.25)], "executor": {"state": "success"}},
        {"revs": [state("7654321bb", "bad", 5.0, 0.2, error=True)], "executor": {"state": "failed"}},
        {"revs": [state("abababab1", "later", 0.02, 0.2)], "executor": {"state": "queued"}},
    ]
    shown = [{**state("workspace", None, 0.003, 0.2), "experiments": None},
             {**state("abcdef123", "main", 0.003, 0.2), "experiments": groups}]  # fmt: skip
    rows = experiments(shown, "h")
    assert [r.label for r in rows] == ["workspace", "main", "  hot", "  bad (failed)", "  later (queued)"]
    other = ["", "", "zz-unregistered", "6.00", "\u2013", ""]  # an order curll does not know: last
    none = ["\u2013"] * 4
    assert table_rows(rows) == [
        ["workspace", "train.lr=0.003", "continual", "5.00", "0.20 [0.10, 0.30]", "\u2013"], other,
        ["main", "train.lr=0.003", "continual", "5.00", "0.20 [0.10, 0.30]", "\u2013"], other,
        ["  hot", "train.lr=0.01", "continual", "5.00", "0.25 [0.10, 0.30]", "\u2013"], other,
        ["  bad (failed)", "train.lr=5.0", *none],
        ["  later (queued)", "train.lr=0.02", *none],
    ]  # fmt: skip


def test_a_params_file_left_invalid_still_names_its_headline_folder(tmp_path: Path):
    """A failed ``dvc exp run -S train.epochs=-1`` leaves that value in params.yaml: experiments
    refused to compare anything until the file was fixed."""
    from pipeline.tools.experiments import headline_folder

    params = load_yaml(ROOT / "params.yaml")
    params["train"]["epochs"] = -1
    dump_yaml(params, tmp_path / "params.yaml")
    folder, why = headline_folder(tmp_path / "params.yaml")
    assert folder == params["evaluate"]["out"]["headline"] and why is not None and "train.epochs" in why
    del params["evaluate"]["out"]["headline"]
    dump_yaml(params, tmp_path / "params.yaml")
    with pytest.raises(CurllError, match=r"train\.epochs"):
        headline_folder(tmp_path / "params.yaml")
    for broken in ({"out": "oops"}, {"out": None}, "oops"):  # a section on the way that is no mapping
        params["evaluate"] = broken
        dump_yaml(params, tmp_path / "params.yaml")
        with pytest.raises(CurllError, match=r"evaluate"):  # one line naming the key, no traceback
            headline_folder(tmp_path / "params.yaml")
