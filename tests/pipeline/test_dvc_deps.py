"""dvc.yaml's code deps are the ones ``pipeline/tools/codedeps.py`` derives from each stage's imports:
an edit to code a stage runs reruns it, an edit to code it never runs does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from curll.errors import CurllError
from curll.yamlio import load_yaml
from pipeline.tools.codedeps import ROOT, closure, code_deps, has_code, regenerate

STAGES = sorted(load_yaml(ROOT / "dvc.yaml")["stages"])


def test_dvc_yaml_holds_the_derived_code_deps():
    assert regenerate(ROOT / "dvc.yaml", write=False) == [], "run `curll deps` and commit dvc.yaml"


@pytest.mark.parametrize("stage", STAGES)
def test_the_deps_cover_exactly_what_the_stage_runs(stage):
    """Every file the stage may run is under a dep; a folder dep holds no code it does not run."""
    files = closure(stage)
    covered: set[Path] = set()
    for dep in code_deps(stage):
        target = ROOT / dep
        under = {p for p in files if p == target or target in p.parents}
        assert under, f"{stage}: {dep} holds no file the stage runs"
        if target.is_dir():
            unused = {p for p in target.rglob("*.py") if has_code(p)} - files
            assert not unused, f"{stage}: {dep} holds code the stage never runs"
        covered |= under
    assert covered == files


def test_the_import_walk_sees_lazy_imports_and_package_inits():
    """The walk itself: stages import torch code lazily inside functions; those files count."""
    lazy = {str(p.relative_to(ROOT)) for p in closure("evaluate_infer")}
    assert "src/curll/model/hf.py" in lazy  # imported inside a function body only
    files = {str(p.relative_to(ROOT)) for p in closure("train")}
    assert "src/curll/model/llama.py" in files  # the model lives outside the train package
    assert "src/curll/__init__.py" in files and "src/curll/errors.py" in files
    assert "pipeline/tools/cli.py" not in files and "src/curll/evaluate/judge.py" not in files


def test_a_folder_only_where_the_stage_runs_all_of_it():
    deps = code_deps("train")
    assert deps[0] == "pipeline/train.py"
    assert "src/curll/model" in deps  # train runs every file of the model package
    assert "src/curll/llm" not in deps and "src/curll/llm/bpe.py" in deps  # one file of many
    assert "src/curll/llm/types.py" not in deps  # train asks no LLM: the request types are no dep


def test_regenerate_restores_a_hand_edited_file_byte_for_byte(tmp_path):
    text = (ROOT / "dvc.yaml").read_text()
    edited = text.replace("      - src/curll/errors.py\n", "", 1).replace(
        "      - pipeline/taxonomy.py\n", "      - pipeline/taxonomy.py\n      - src/curll/lexicon.py\n", 1
    )
    assert edited != text
    path = tmp_path / "dvc.yaml"
    path.write_text(edited)
    stale = regenerate(path, write=False)
    assert "taxonomy" in stale and path.read_text() == edited  # a check writes nothing
    assert regenerate(path, write=True) == stale
    assert path.read_text() == text  # comments, data deps and the rest as they were
    assert regenerate(path, write=False) == []


def test_a_stage_without_a_module_is_an_error(tmp_path):
    path = tmp_path / "dvc.yaml"
    path.write_text("stages:\n  nosuch:\n    cmd: curll nosuch run\n")
    with pytest.raises(CurllError, match="nosuch"):
        regenerate(path, write=False)


@pytest.mark.parametrize(
    ("deps", "error"),
    [
        ("", "has no deps: list"),  # nowhere to write them
        ("    deps:\n      - src/curll/resources/vocab_builtin.csv\n", "not plain code"),  # would be dropped
        ("    deps:\n      - src/curll/seeds.py:\n          cache: false\n", "not plain code"),  # kept twice
    ],
)
def test_a_dep_the_program_cannot_own_is_an_error_naming_the_stage(tmp_path, deps, error):
    path = tmp_path / "dvc.yaml"
    text = "stages:\n  seeds:\n    cmd: curll seeds run\n" + deps
    path.write_text(text)
    with pytest.raises(CurllError, match=f"stage 'seeds'.*{error}"):
        regenerate(path, write=True)
    assert path.read_text() == text  # nothing written
