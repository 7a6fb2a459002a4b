"""The layers of ``src/curll``: the shared packages import no domain package.

``curll.config`` (the params), ``curll.llm`` (the LLM layer) and ``curll.model`` (the language
model) serve many stages, so none of them may import a stage's package (train, evaluate, ...):
the model lives in ``curll.model`` for that reason, and both ``curll.train`` and ``curll.llm``
import it. ``curll.model`` is the bottom layer: it imports none of curll's packages. The imports
are read from the source (``ast``), lazy ones inside functions included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "curll"
PACKAGES = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
SHARED = {"config", "llm", "model", "schemas"}
DOMAIN = PACKAGES - SHARED


def curll_packages(folder: Path) -> set[str]:
    """The other curll packages (``curll.<folder>``) imported anywhere under ``folder``."""
    found: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            found |= {parts[1] for n in names if (parts := n.split("."))[0] == "curll" and len(parts) > 1}
    return (found & PACKAGES) - {folder.name}


@pytest.mark.parametrize("package", ["config", "llm", "model"])
def test_a_shared_package_imports_no_domain_package(package: str):
    assert curll_packages(SRC / package) & DOMAIN == set()


def test_the_model_imports_no_other_package():
    assert curll_packages(SRC / "model") == set()


def test_the_walk_sees_the_packages_a_domain_package_imports():
    assert {"model", "llm", "config"} <= curll_packages(SRC / "train")
    assert {"train", "evaluate"} <= DOMAIN and "train" not in SHARED
