"""dvc.yaml's code deps match what each stage imports: an edit to code a stage runs reruns it,
an edit to code it never runs does not.

For every stage, the project files that ``pipeline/<stage>.py`` imports are found by reading
the source (``ast``: imports inside functions count, as the heavy ones are lazy), transitively,
inside ``pipeline/`` and ``src/curll/``, with the packages' ``__init__.py`` that an import runs.
A file without code (a docstring only) is left out: editing it cannot change an output.
``pipeline/cli.py`` only dispatches to the stage module and is not a dep.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"curll": ROOT / "src" / "curll", "pipeline": ROOT / "pipeline"}
STAGES: dict[str, Any] = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]


def module_file(name: str) -> Path | None:
    """The file that ``import name`` runs last (a module or a package's __init__), if it is ours."""
    top, *rest = name.split(".")
    if top not in PACKAGES:
        return None
    base = PACKAGES[top].joinpath(*rest)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def ran_by(name: str) -> list[Path]:
    """Every file ``import name`` runs: each enclosing package's __init__ and the module itself."""
    parts = name.split(".")
    return [f for i in range(1, len(parts) + 1) if (f := module_file(".".join(parts[:i]))) is not None]


def imported_names(path: Path) -> set[str]:
    """Dotted module names imported anywhere in ``path``; ``from a import b`` gives ``a.b`` when
    ``b`` is a module, else ``a``."""
    names: set[str] = set()
    package = ".".join(path.relative_to(ROOT / "src" if "src" in path.parts else ROOT).with_suffix("").parts)
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                anchor = package.split(".")[: -node.level]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names if module_file(f"{base}.{a.name}"))
    return names


def has_code(path: Path) -> bool:
    body = ast.parse(path.read_text()).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return any(not (isinstance(s, ast.ImportFrom) and s.module == "__future__") for s in body)


def closure(stage: str) -> set[Path]:
    """Project files that running ``pipeline/<stage>.py`` may execute."""
    todo = [ROOT / "pipeline" / f"{stage}.py"]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in imported_names(path):
            todo.extend(f for f in ran_by(name) if f not in seen)
    return {p for p in seen if has_code(p)}


def code_deps(stage: str) -> list[str]:
    deps = [next(iter(d)) if isinstance(d, dict) else str(d) for d in STAGES[stage].get("deps", [])]
    return [d for d in deps if d.startswith(("pipeline/", "src/"))]


def covers(dep: str, path: Path) -> bool:
    target = ROOT / dep
    return path == target or target in path.parents


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_every_module_a_stage_imports_is_a_dep(stage):
    deps = code_deps(stage)
    missing = sorted(str(p.relative_to(ROOT)) for p in closure(stage) if not any(covers(d, p) for d in deps))
    assert missing == [], f"add to dvc.yaml stage '{stage}' deps (or the folder that holds them)"


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_a_stage_depends_on_no_code_it_does_not_import(stage):
    files = closure(stage)
    unused = [d for d in code_deps(stage) if not any(covers(d, p) for p in files)]
    assert unused == [], f"stage '{stage}' never runs these deps: remove them from dvc.yaml"


def test_the_import_walk_sees_lazy_imports_and_package_inits():
    """The walk itself: stages import torch code lazily inside functions; those files count."""
    lazy = {str(p.relative_to(ROOT)) for p in closure("evaluate_infer")}
    assert "src/curll/model/hf.py" in lazy  # imported inside a function body only
    files = {str(p.relative_to(ROOT)) for p in closure("train")}
    assert "src/curll/model/llama.py" in files  # the model lives outside the train package
    assert "src/curll/__init__.py" in files and "src/curll/errors.py" in files
    assert "pipeline/cli.py" not in files and "src/curll/evaluate/judge.py" not in files
