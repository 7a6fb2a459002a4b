"""``curll deps``: dvc.yaml's code deps, derived from what each stage imports.

The code deps of a stage are written by this module, not by hand: every project file that
``pipeline/<stage>.py`` may run, found by reading the source (``ast``; imports inside functions
count, as the heavy ones are lazy), transitively inside ``pipeline/`` and ``src/curll/``, with
each package's ``__init__.py`` that an import runs. A file without code (a docstring only) is
left out: editing it cannot change an output. ``pipeline/tools/cli.py`` only dispatches to the stage
module and is not a dep.

They are written as a folder where the stage runs every code file under it, else file by file,
sorted, after the stage's own module. Deps outside ``pipeline/`` and ``src/`` (data, prompts,
models) are the stage's own: they stay first, as written. ``curll deps`` rewrites dvc.yaml in
place (comments and everything else kept); ``curll deps --check`` changes nothing and fails
naming the stages whose deps differ (the test suite runs it). A ``foreach`` stage's deps are
its ``do`` block's. A stage without a ``deps:`` list, a module, or a dep under ``pipeline/`` or
``src/`` that is not plain code (a data file there, or a dep with options) is an error naming
the stage: such a dep would be dropped or written twice.
"""

from __future__ import annotations

import ast
import io
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"curll": ROOT / "src" / "curll", "pipeline": ROOT / "pipeline"}
CODE_ROOTS = ("pipeline/", "src/")


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
    top = ROOT / "src" if path.is_relative_to(ROOT / "src") else ROOT
    package = ".".join(path.relative_to(top).with_suffix("").parts)
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


@cache
def has_code(path: Path) -> bool:
    """False for a file that is a docstring (and ``from __future__`` imports) only."""
    body = ast.parse(path.read_text()).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return any(not (isinstance(s, ast.ImportFrom) and s.module == "__future__") for s in body)


@cache
def closure(stage: str) -> frozenset[Path]:
    """Project files with code that running ``pipeline/<stage>.py`` may execute."""
    todo = [ROOT / "pipeline" / f"{stage}.py"]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in imported_names(path):
            todo.extend(f for f in ran_by(name) if f not in seen)
    return frozenset(p for p in seen if has_code(p))


def code_deps(stage: str) -> list[str]:
    """``pipeline/<stage>.py``, then the rest of :func:`closure` as dvc.yaml deps: the outermost
    folder below ``src/curll`` (or ``pipeline``) whose code files the stage all runs, else the
    file; sorted."""
    files = closure(stage)
    own = ROOT / "pipeline" / f"{stage}.py"
    deps: set[str] = set()
    for path in files - {own}:
        dep = path
        for folder in path.parents:
            if folder in PACKAGES.values() or not _all_run(folder, files):
                break
            dep = folder
        deps.add(dep.relative_to(ROOT).as_posix())
    return [own.relative_to(ROOT).as_posix(), *sorted(deps)]


def _all_run(folder: Path, files: frozenset[Path]) -> bool:
    return all(p in files for p in folder.rglob("*.py") if has_code(p))


def _is_code(path: Path) -> bool:
    return path.suffix == ".py" or (path.is_dir() and any(path.rglob("*.py")))


def _yaml() -> Any:
    from ruamel.yaml import YAML  # DVC's own YAML library: a round trip keeps comments and layout

    y = YAML()
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    y.width = 4096
    return y


def regenerate(dvc_yaml: Path, *, write: bool) -> list[str]:
    """Stages whose code deps in ``dvc_yaml`` differ from :func:`code_deps`; with ``write``, the
    file is rewritten (atomically) with the derived deps. A stage without a module
    ``pipeline/<stage>.py`` or a ``deps:`` list, or with a dep under ``pipeline/`` or ``src/``
    that is not plain code, is a CurllError naming the stage (nothing is written)."""
    from curll.artifacts import atomic_write_text
    from curll.errors import CurllError

    y = _yaml()
    doc = y.load(dvc_yaml.read_text())
    stale: list[str] = []
    for name, stage in doc["stages"].items():
        if not (ROOT / "pipeline" / f"{name}.py").is_file():
            raise CurllError(f"{dvc_yaml}: stage '{name}' has no module pipeline/{name}.py")
        body = stage["do"] if "foreach" in stage else stage
        if "deps" not in body:
            raise CurllError(
                f"{dvc_yaml}: stage '{name}' has no deps: list (its own data deps, if any, first)"
            )
        deps = list(body["deps"])
        for dep in deps:
            path = next(iter(dep)) if isinstance(dep, dict) else str(dep)
            if path.startswith(CODE_ROOTS) and (isinstance(dep, dict) or not _is_code(ROOT / path)):
                raise CurllError(
                    f"{dvc_yaml}: stage '{name}' dep {path!r} is under {' or '.join(CODE_ROOTS)} but is not"
                    " plain code (a .py file or a folder of them): `curll deps` writes those deps"
                )
        own = [d for d in deps if not str(d).startswith(CODE_ROOTS)]
        wanted = own + code_deps(name)
        if deps != wanted:
            stale.append(name)
            body["deps"][:] = wanted
    if write and stale:
        buf = io.StringIO()
        y.dump(doc, buf)
        atomic_write_text(dvc_yaml, buf.getvalue())
    return stale
