"""The params reference page is generated from the typed params and must not go stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from curll.config import Params, load_params
from pipeline.tools import docs_params

ROOT = Path(__file__).resolve().parents[1]


def test_committed_page_is_current() -> None:
    committed = (ROOT / docs_params.PAGE).read_text(encoding="utf-8")
    assert committed == docs_params.render(), (
        f"{docs_params.PAGE} is stale: run python -m pipeline.tools.docs_params and commit it"
    )


def test_page_names_every_key_of_the_default_params() -> None:
    page = docs_params.render()
    params = load_params(ROOT / "params.yaml")
    for section in Params.model_fields:
        assert f"## `{section}`" in page
        for key in type(getattr(params, section)).model_fields:
            assert f"| `{section}.{key}` |" in page, f"{section}.{key} missing"


def test_check_mode_reports_a_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "params-reference.md"
    monkeypatch.setattr(docs_params, "PAGE", page)
    assert docs_params.main(["--check"]) == 1  # missing
    assert docs_params.main([]) == 0
    assert docs_params.main(["--check"]) == 0
    page.write_text(page.read_text(encoding="utf-8") + "edited\n", encoding="utf-8")
    assert docs_params.main(["--check"]) == 1
