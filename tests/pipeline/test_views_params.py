"""params.yaml is laid out as DVC writes it back, so ``dvc exp run -S`` changes one line only."""

from __future__ import annotations

import difflib
import io
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _dvc_round_trip(text: str) -> str:
    from dvc.utils.serialize._yaml import _get_yaml, parse_yaml_for_update

    buf = io.StringIO()
    _get_yaml().dump(parse_yaml_for_update(text, "params.yaml"), buf)
    return buf.getvalue()


def test_params_yaml_round_trips_through_dvc_unchanged():
    text = (ROOT / "params.yaml").read_text(encoding="utf-8")
    assert _dvc_round_trip(text) == text


def _set(tmp_path: Path, override: str) -> list[str]:
    """The changed lines (``-old``, ``+new``) after what ``dvc exp run -S <override>`` applies
    (dvc.utils.hydra.apply_overrides, through dvc.utils.serialize.modify_yaml) to a copy."""
    from dvc.utils.hydra import apply_overrides

    path = tmp_path / "params.yaml"
    shutil.copy(ROOT / "params.yaml", path)
    before = path.read_text(encoding="utf-8").splitlines()
    apply_overrides(path, [override])
    after = path.read_text(encoding="utf-8").splitlines()
    diff = difflib.unified_diff(before, after, lineterm="", n=0)
    return [d for d in diff if d[:1] in "+-" and not d.startswith(("+++", "---"))]


def test_set_param_changes_exactly_one_line(tmp_path):
    """Every list is in block style: DVC writes a list it has read back in block style, so a
    flow list anywhere in the file would be rewritten by any ``-S``."""
    changed = _set(tmp_path, "train.budget=steps")
    assert [c.split("#")[0].rstrip() for c in changed] == ["-  budget: data", "+  budget: steps"]


def test_set_a_list_to_one_value_changes_that_key_alone(tmp_path):
    changed = _set(tmp_path, "train.order=continual")
    assert [c.split("#")[0].rstrip() for c in changed] == [
        "-  order:", "-  - independent", "-  - joint", "-  - continual", "+  order: continual"
    ]  # fmt: skip
