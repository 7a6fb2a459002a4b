"""Shared fixtures. Third-party reference data is read from ../shared/reference and
tests that need it skip cleanly when it is absent (it is never copied into the repo)."""

from __future__ import annotations

from pathlib import Path

import pytest

from curll.config.models import RandomModel
from tests.repro import Reproduced, reproduce

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference"


def reference_file(*parts: str) -> Path:
    """Path under ../shared/reference, or skip the test when it is not there."""
    path = REFERENCE.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"reference data not available: {path}")
    return path


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text_or_bytes) -> path of a new file under tmp_path."""

    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write


@pytest.fixture(scope="session")
def embedded_spec() -> RandomModel:
    """params.yaml's ``llm_models.builtin.embedded`` (its corpus as an absolute path)."""
    from curll.config import load_params

    spec = load_params(ROOT / "params.yaml").llm_models.builtin["embedded"]
    assert isinstance(spec, RandomModel)
    return spec.model_copy(update={"corpus": str(ROOT / spec.corpus)})


@pytest.fixture(scope="session")
def embedded_model(tmp_path_factory: pytest.TempPathFactory, embedded_spec: RandomModel) -> Path:
    """The embedded tiny model as the ``llm_models`` stage builds it (our Llama at the shape
    params.yaml names, random weights, local BPE), built once per test session."""
    from curll.llm.local import build_local_model

    out = tmp_path_factory.mktemp("models") / "tiny"
    build_local_model("embedded", embedded_spec, out)
    return out


@pytest.fixture(scope="session")
def reproduced(tmp_path_factory: pytest.TempPathFactory) -> Reproduced:
    """The whole pipeline run once through real DVC (tests/repro.py); tests may change the repo
    (the smoke test does) or copy it."""
    return reproduce(tmp_path_factory.mktemp("pipeline"))
