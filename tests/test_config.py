from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from curll.config import load_params, parse_params
from curll.errors import CurllError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def good() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "params.yaml").read_text())
    return data


def test_repo_params_load_frozen(good):
    params = load_params(ROOT / "params.yaml")
    assert params.vocab.stages == (0, 1, 2, 3, 4)
    with pytest.raises(Exception, match="frozen"):
        params.vocab.seed = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("mutate", "key", "message"),
    [
        (lambda d: d["vocab"].update(max_per_stag=3), "vocab.max_per_stag", "unknown key"),
        (lambda d: d.update(trainn={}), "trainn", "unknown key"),
        (lambda d: d["vocab"].update(max_per_stage="5"), "vocab.max_per_stage", "valid integer"),
        (lambda d: d["vocab"].update(max_per_stage=-1), "vocab.max_per_stage", "greater than or equal to 0"),
        (lambda d: d["vocab"].update(bands="sometimes"), "vocab.bands", "exclusive"),
        (lambda d: d["taxonomy"].update(stages=[0, 12]), "taxonomy.stages.1", "less than or equal to 9"),
        (lambda d: d["taxonomy"].update(stages=[1, 1]), "taxonomy.stages", "must not repeat"),
        (lambda d: d["taxonomy"]["out"].pop("stats"), "taxonomy.out.stats", "missing"),
        (lambda d: d["vocab"].update(seed=True), "vocab.seed", "valid integer"),
    ],
)
def test_bad_params_name_the_key(good, mutate, key, message):
    data = copy.deepcopy(good)
    mutate(data)
    with pytest.raises(CurllError, match=message) as err:
        parse_params(data, source="params.yaml")
    assert err.value.field == key
    assert err.value.file == "params.yaml"


def test_stages_are_sorted(good):
    data = copy.deepcopy(good)
    data["vocab"]["stages"] = [3, 1]
    assert parse_params(data).vocab.stages == (1, 3)


def test_unreadable_params_files(tmp_path):
    with pytest.raises(CurllError, match="not found"):
        load_params(tmp_path / "nope.yaml")
    bad = tmp_path / "p.yaml"
    bad.write_text("taxonomy: [unclosed\n")
    with pytest.raises(CurllError, match="invalid YAML"):
        load_params(bad)
