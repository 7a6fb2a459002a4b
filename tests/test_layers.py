"""The layers of ``src/curll``: the shared packages import no domain package.

``curll.config`` (the params), ``curll.llm`` (the LLM layer) and ``curll.model`` (the language
model) serve many stages, so none of them may import a stage's package (train, evaluate, ...):
the model lives in ``curll.model`` for that reason, and both ``curll.train`` and ``curll.llm``
import it. ``curll.model`` is the bottom layer: it imports none of curll's packages; so is the
ground floor of modules that every layer reads (the spec registries, the sampling params),
which import nothing of curll but each other. The params and the prompt files import nothing of
the LLM layer (a stage that never asks an LLM does not depend on its request types). The
imports are read from the source (``ast``), lazy ones inside functions included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "curll"
PACKAGES = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
SHARED = {"config", "llm", "model", "schemas"}
DOMAIN = PACKAGES - SHARED


#: modules every layer may import: they import nothing of curll but each other
GROUND = ("registry", "orders", "instances", "sampling", "errors", "layouts")


def imported(path: Path) -> set[str]:
    """The ``curll.<name>`` names (the part after ``curll.``) that ``path`` imports, however deep."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        found |= {n.removeprefix("curll.") for n in names if n.startswith("curll.")}
    return found


def curll_packages(folder: Path) -> set[str]:
    """The other curll packages (``curll.<folder>``) imported anywhere under ``folder``."""
    found = {name.split(".")[0] for path in folder.rglob("*.py") for name in imported(path)}
    return (found & PACKAGES) - {folder.name}


@pytest.mark.parametrize("package", ["config", "llm", "model"])
def test_a_shared_package_imports_no_domain_package(package: str):
    assert curll_packages(SRC / package) & DOMAIN == set()


def test_the_model_imports_no_other_package():
    assert curll_packages(SRC / "model") == set()


def test_the_walk_sees_the_packages_a_domain_package_imports():
    assert {"model", "llm", "config"} <= curll_packages(SRC / "train")
    assert {"train", "evaluate"} <= DOMAIN and "train" not in SHARED


@pytest.mark.parametrize("module", GROUND)
def test_the_ground_floor_imports_nothing_above_it(module: str):
    assert {n.split(".")[0] for n in imported(SRC / f"{module}.py")} <= set(GROUND)


def test_params_and_prompts_import_nothing_of_the_llm_layer():
    for path in [*(SRC / "config").glob("*.py"), SRC / "prompts.py"]:
        assert not {n for n in imported(path) if n.split(".")[0] == "llm"}, path


def _tops(folder: Path) -> set[str]:
    """The project's top-level packages (tests, bench, harness, pipeline) that ``folder`` imports."""
    found = {top for path in folder.rglob("*.py") for top in _tops_of(path)}
    return found & {"tests", "bench", "harness", "pipeline"}


#: the tests of a benchmark's own code: the only test files that import bench/
BENCH_TESTS = {"test_scale_harness.py", "test_release_import_bench.py", "test_calls.py"}


def test_tests_and_benches_share_the_harness_and_import_nothing_of_each_other():
    root = SRC.parents[1]
    assert _tops(root / "harness") <= {"harness"} and "tests" not in _tops(root / "bench")
    for path in (root / "tests").rglob("*.py"):
        if path.name not in BENCH_TESTS:
            assert "bench" not in _tops_of(path), path


def _tops_of(path: Path) -> set[str]:
    return {n.split(".")[0] for n in imported_modules(path)}


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module)
    return found
