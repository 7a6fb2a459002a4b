"""The suite's one end-to-end ``dvc repro`` (the ``reproduced`` fixture of tests/conftest.py): a
temporary git repo holding the project's pipeline (dvc.yaml, params, code, prompts) with the
default params shrunk, reproduced once per session and shared by every test that needs a whole
pipeline's outputs.

The default params run as they are, except for sizes shrunk so the whole pipeline (with the
embedded tiny model) takes about two minutes on an idle 2-core machine: one seed per indicator
and type, short outputs, and a curriculum as users bring one: two later stages, 6 and 7, in the
CurLL authors' layout with a repeated cell (``taxonomy.duplicates: drop``) and words from a file
in the Kuperman norms' format banded by the paper's rule (tests/data).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curll.yamlio import dump_yaml, load_yaml
from harness.commands import dvc, on_random_model, run

ROOT = Path(__file__).resolve().parents[1]
COPY = ["dvc.yaml", "params.yaml", ".dvcignore", ".dvc/config", "src", "pipeline", "prompts", "checkpoints",
        "releases"]  # fmt: skip
IGNORE = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
#: the stages of the shared pipeline, and its inputs (copied from tests/data into the repo)
STAGES = (6, 7)
CURRICULUM = {"curriculum/later_stages.csv": "later_stages.csv", "curriculum/aoa.csv": "aoa_later.csv"}


def shrink(params: dict[str, Any], encoder: Path | None = None) -> dict[str, Any]:
    """The default params shrunk (the module docstring); ``encoder``: a model2vec folder the
    verify_encoder stage takes as it is, instead of distilling MiniLM again (about a minute)."""
    on_random_model(params)
    params["taxonomy"].update(layout="curll-csv", input="curriculum/later_stages.csv", stages=list(STAGES),
                              per_stage=3, duplicates="drop")  # fmt: skip
    params["vocab"].update(format="kuperman", input="curriculum/aoa.csv", stages=list(STAGES))
    params["templates"].update(min_items=3, max_items=4)
    params["seeds"]["per_indicator"] = {"context": 2, "ir": 2}  # an IR unit for test, one for train
    params["verify"]["readability"]["sample"] = 20
    params["verify_encoder"]["pca_dims"] = 32
    if encoder is not None:
        params["verify_encoder"].update(source=str(encoder), pca_dims=None)
    params["split"].update(test_per_indicator=1, val_per_indicator=0, max_holdout=1.0)  # 1-2 units: no cap
    params["tokenizer"]["vocab_size"] = 400
    params["train"].update(stages=list(STAGES), context=128, batch=4, micro_batch=2, seeds=[42, 43])
    params["evaluate"]["judge_seeds"] = 1  # the second seed's models: the loss only
    params["evaluate"]["infer"]["prompt_tokens"] = 96  # + max_tokens: within train.context
    params["evaluate"]["infer"]["sampling"]["max_tokens"] = 32
    params["evaluate"]["max_per_type"] = 2
    params["evaluate"]["rubric"]["enabled"] = True  # off by default (judge time): keep it covered
    params["evaluate"]["bootstrap"]["samples"] = 20
    params["evaluate"]["accept_gaps"] = True  # a few random-model items a stage: the gaps are reported
    params["skill_graph"]["neighbours"] = 1
    params["generate"]["pairs"] = {"cqa": 2, "csqa": 1}
    embedded = params["llm"]["profiles"]["embedded"]
    embedded.update(batch_size=32, max_chars={"long": 80, "short": 30})
    embedded["sampling"]["max_tokens"] = 200
    return params


@dataclass(frozen=True)
class Reproduced:
    path: Path  #: the repo; tests may change it, and run in any order (xdist keeps no file order)
    first: subprocess.CompletedProcess[str]  #: the first ``dvc repro``, from nothing


def reproduce(dest: Path, encoder: Path | None = None) -> Reproduced:
    """Lay the shrunk pipeline out in ``dest`` (a new git repo) and run ``dvc repro`` once."""
    files = {name: ROOT / "tests" / "data" / src for name, src in CURRICULUM.items()}
    lay_out(dest, lambda params: shrink(params, encoder), files=files)
    return Reproduced(dest, dvc("repro", cwd=dest))


def lay_out(
    dest: Path, edit: Callable[[dict[str, Any]], dict[str, Any]], files: dict[str, Path] | None = None
) -> Path:
    """The project's pipeline (dvc.yaml, code, prompts) in ``dest``, a new git repo, with its
    params.yaml changed by ``edit`` and ``files`` ({path in the repo: source}) copied in."""
    for name, source in (files or {}).items():
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest / name)
    for name in COPY:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=IGNORE)
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    params = load_yaml(dest / "params.yaml")
    dump_yaml(edit(params), dest / "params.yaml")
    (dest / ".dvc" / ".gitignore").write_text("/config.local\n/tmp\n/cache\n")
    (dest / ".gitignore").write_text(".curll/\n")
    run(["git", "init", "-q"], cwd=dest)
    run(["git", "add", "-A"], cwd=dest)
    run(["git", "commit", "-qm", "pipeline"], cwd=dest)
    return dest
