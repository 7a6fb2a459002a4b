"""``curll experiments``: DVC experiments side by side, one screen wide.

``dvc exp show`` gives every leaf of ``params.yaml`` and every stage dependency a column (about
500 here), so without flags it cannot fit a screen. This reads the same data
(``dvc exp show --json``: the workspace, the commit and its experiments) and keeps what tells
experiments apart: the params whose values differ between the rows shown, and each order's
headline from the DVC metrics folder (``evaluate.out.headline``: NLL and gain over the unigram
baseline with their 95% intervals, and the judge panel's control verdict). One row per
experiment and order.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curll.errors import CurllError
from curll.evaluate.headline import DASH, JUDGE_FILE, fmt, read_metric_file
from curll.orders import ranked

#: the table's columns
COLUMNS = ("experiment", "params that differ", "order", "NLL [95%]", "gain [95%]", "judge")


@dataclass(frozen=True)
class Experiment:
    """One row of ``dvc exp show``: its label, its flattened params, its headline files."""

    label: str
    params: dict[str, Any]
    headline: dict[str, dict[str, Any]]  # file name -> content


def _flat(d: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for k, v in d.items():
        if isinstance(v, Mapping) and v:
            yield from _flat(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def _one(state: Mapping[str, Any], label: str, folder: str, *, finished: bool = True) -> Experiment | None:
    """A row of ``state``; None without data. An experiment not ``finished`` (queued, running or
    failed: DVC shows it with the params it was given and the metrics of the commit it started
    from) keeps its params and no headline."""
    data = state.get("data") or {}
    if not data:
        return None
    params = dict(_flat(((data.get("params") or {}).get("params.yaml") or {}).get("data") or {}))
    files = {
        Path(path).name: (result or {}).get("data") or {}
        for path, result in (data.get("metrics") or {}).items()
        if finished and Path(path).parent.as_posix() == folder
    }
    return Experiment(label, params, files)


def experiments(shown: Sequence[Mapping[str, Any]], folder: str) -> list[Experiment]:
    """The rows of ``dvc exp show --json`` (``shown``) that have data: the workspace, each
    commit and its experiments (labelled by their names, and by their state unless they
    succeeded: ``name (failed)``); ``folder``: the headline folder."""
    out = []
    for base in shown:
        rev = str(base.get("rev", ""))
        label = "workspace" if rev == "workspace" else str(base.get("name") or rev[:7])
        if (row := _one(base, label, folder)) is not None:
            out.append(row)
        for group in base.get("experiments") or []:
            ran = (group.get("executor") or {}).get("state")
            for state in group.get("revs") or []:
                name = str(state.get("name") or str(state.get("rev", ""))[:7])
                status = "failed" if state.get("error") else ran if ran not in (None, "success") else None
                label = f"  {name}" + (f" ({status})" if status else "")
                if (row := _one(state, label, folder, finished=status is None)) is not None:
                    out.append(row)
    return out


def differing(rows: list[Experiment]) -> list[str]:
    """The params keys whose values are not the same in every row, in params.yaml's order."""
    keys: dict[str, None] = {}
    for r in rows:
        keys.update(dict.fromkeys(r.params))
    return [k for k in keys if len({json.dumps(r.params.get(k), sort_keys=True) for r in rows}) > 1]


def _value(v: Any) -> str:
    """A params value as ``dvc exp run -S`` takes it: ``[joint, continual]``, ``0.1``, ``none``."""
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return "none" if v is None else json.dumps(v) if isinstance(v, dict) else str(v)


def table_rows(rows: list[Experiment]) -> list[list[str]]:
    """One list of strings per (experiment, order), in :data:`COLUMNS`' order; the experiment,
    its params and its judge verdict on its first row."""
    keys = differing(rows)
    out = []
    for r in rows:
        said = "\n".join(f"{k}={_value(r.params[k])}" if k in r.params else f"{k} (absent)"
                          for k in keys) or "(same)"  # fmt: skip
        judge = r.headline.get(JUDGE_FILE, {}).get("informative")
        verdict = DASH if judge is None else ("passed" if judge else "failed")
        files = {Path(n).stem: n for n in r.headline if n != JUDGE_FILE}
        known = ranked(files)  # the registry's order, then any other order's file by name
        orders = [files[o] for o in known + sorted(set(files) - set(known))]
        if not orders:
            out.append([r.label, said, DASH, DASH, DASH, verdict])
        for i, name in enumerate(orders):
            nll, gain = read_metric_file(r.headline[name])
            first = i == 0
            out.append([r.label if first else "", said if first else "", Path(name).stem, fmt(nll), fmt(gain),
                        verdict if first else ""])  # fmt: skip
    return out


def headline_folder(params: Path) -> tuple[str, str | None]:
    """``evaluate.out.headline`` of ``params`` (relative to its folder, as DVC reads it), and
    None; where the file does not load (a failed ``dvc exp run -S`` leaves its bad value there),
    the key as written and the one-line reason, so experiments can still be compared."""
    from curll.config import load_params
    from curll.yamlio import load_yaml

    try:
        return Path(load_params(params).evaluate.out.headline).as_posix(), None
    except CurllError as exc:
        written: Any = load_yaml(params)
        for key in ("evaluate", "out", "headline"):
            written = written.get(key) if isinstance(written, Mapping) else None
        if not isinstance(written, str) or not written:
            raise
        return Path(written).as_posix(), str(exc)


def notes(rows: Sequence[Experiment], params: Path, invalid: str | None) -> list[str]:
    """Lines under the table: a params file that does not load, and a row holding headline
    files of orders its ``train.order`` does not train (left in the workspace by another
    experiment's outputs, as ``dvc exp apply`` over an applied experiment leaves them; not
    where ``evaluate.checkpoints`` scores other models, whose orders are their own)."""
    out = []
    if invalid:
        out.append(f"{params} does not load ({invalid}): the workspace row shows its values as written")
    fix = "before `dvc exp apply`, run `git checkout -- params.yaml dvc.lock data && dvc checkout --force`"
    for r in rows:
        if r.params.get("evaluate.checkpoints.models"):
            continue  # checkpoints scored in place of train's models: their own orders
        order = r.params.get("train.order")
        trained = [order] if isinstance(order, str) else order if isinstance(order, list) else None
        files = [Path(n).stem for n in r.headline if n != JUDGE_FILE]
        stale = sorted(o for o in files if trained is not None and o not in trained)
        if stale:
            out.append(f"{r.label.strip()}: {', '.join(stale)} not in its train.order: files left by "
                       f"another experiment ({fix})")  # fmt: skip
    return out


def dvc_exp_show(cwd: Path = Path()) -> list[Mapping[str, Any]]:
    """``dvc exp show --json`` in ``cwd``, parsed; a CurllError with DVC's message if it fails."""
    done = subprocess.run([sys.executable, "-m", "dvc", "exp", "show", "--json"], cwd=cwd,
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise CurllError(f"dvc exp show failed: {why}", file=cwd.resolve())
    shown: list[Mapping[str, Any]] = json.loads(done.stdout)
    return shown
