"""dvc.yaml takes every data path from params: a literal path would not follow a params change."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CODE = ("pipeline/", "src/curll/")  # the stage's own code is named by its place in the repo
# a param, or a file the stage names inside a folder that is a param (plots/diversity.csv)
PARAM_ROOTED = re.compile(r"^\$\{[A-Za-z0-9_.\-]+\}(/[A-Za-z0-9_.\-]+)*$")


def paths(entries: list[Any]) -> list[str]:
    """The path of every dep, out, metric or plot entry (an entry is a path or {path: options})."""
    return [next(iter(e)) if isinstance(e, dict) else str(e) for e in entries]


def test_every_data_path_in_dvc_yaml_is_a_param():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    literal = [
        f"{name}.{field}: {path}"
        for name, stage in stages.items()
        for field in ("deps", "outs", "metrics", "plots")
        for path in paths(stage.get(field, []))
        if not PARAM_ROOTED.match(path) and not path.startswith(CODE)
    ]
    assert literal == [], "write these as ${section.key} from params.yaml"
