"""The llm_models stage builds exactly the local models the profiles in use name: a converted
GGUF, the random model, or nothing for a server profile or a llamacpp one (whose GGUF is only
checked and hashed); a GGUF whose sha256 differs from the params is refused, naming the key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from curll.config import parse_params
from curll.errors import CurllError
from curll.llm.gguf import sha256_file
from tests.llm.test_gguf import write_tiny_gguf

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gguf_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    write_tiny_gguf(path)
    return path


def params(tmp_path: Path, use: str, judges: list[str], gguf: Path | None = None, sha: str = "") -> Any:
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["llm"]["use"] = use
    data["split"]["rater"] = use  # only use and the judges are in use here
    data["evaluate"]["judges"] = judges
    data["llm_models"]["out"] = {"dir": str(tmp_path / "models"), "stats": str(tmp_path / "stats.json")}
    embedded = data["llm_models"]["builtin"]["embedded"]
    embedded["corpus"] = str(ROOT / embedded["corpus"])
    if gguf is not None:
        data["llm_models"]["builtin"]["tiny-gguf"] = {"kind": "gguf", "file": str(gguf), "sha256": sha}
        data["llm"]["profiles"]["smollm2"]["model"] = "tiny-gguf"  # llamacpp: served as it is
        data["llm"]["profiles"]["smollm2-torch"]["model"] = "tiny-gguf"  # transformers: converted
    return parse_params(data)


def built(tmp_path: Path) -> set[str]:
    return {p.name for p in (tmp_path / "models").iterdir() if p.is_dir()}


def test_only_the_models_in_use_are_built(tmp_path, gguf_file):
    from pipeline import llm_models

    sha = sha256_file(gguf_file)
    llm_models.run(params(tmp_path, "smollm2-torch", ["smollm2-torch"], gguf_file, sha))
    assert built(tmp_path) == {"tiny-gguf"}  # the random model is not built when nothing names it
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["built"]["tiny-gguf"]["eos"] == "<|im_end|>" and stats["built"]["tiny-gguf"]["fingerprint"]
    assert stats["profiles"]["smollm2-torch"]["loads"] == str(tmp_path / "models" / "tiny-gguf")

    llm_models.run(params(tmp_path, "smollm2-torch", ["smollm2-torch", "embedded"], gguf_file, sha))
    assert built(tmp_path) == {"tiny-gguf", "embedded"}  # a judge panel with both

    llm_models.run(params(tmp_path, "smollm2", ["smollm2"], gguf_file, sha))
    assert built(tmp_path) == set()  # llama.cpp serves the file: nothing converted, old folders gone
    served = json.loads((tmp_path / "models" / "profiles.json").read_text())["smollm2"]
    assert served == {"backend": "llamacpp", "model": "tiny-gguf", "loads": str(gguf_file), "sha256": sha}

    llm_models.run(params(tmp_path, "server", ["server"]))
    assert built(tmp_path) == set()  # a server builds nothing; the stale folders are gone
    assert json.loads((tmp_path / "models" / "profiles.json").read_text())["server"]["backend"] == "openai"


@pytest.mark.parametrize("profile", ["smollm2-torch", "smollm2"])
def test_a_gguf_of_another_release_is_refused(tmp_path, gguf_file, profile):
    from pipeline import llm_models

    with pytest.raises(CurllError, match="sha256 is") as err:
        llm_models.run(params(tmp_path, profile, [profile], gguf_file, "0" * 64))
    assert err.value.field == "llm_models.builtin.tiny-gguf.sha256"
    assert not (tmp_path / "models" / "tiny-gguf").exists()


def test_a_llamacpp_profile_needs_a_gguf_model(tmp_path, gguf_file):
    from pipeline import llm_models

    bad = params(tmp_path, "smollm2", ["smollm2"], gguf_file, sha256_file(gguf_file))
    served = bad.llm.profiles["smollm2"].model_copy(update={"model": "embedded"})  # a random model
    profiles = {**bad.llm.profiles, "smollm2": served}
    bad = bad.model_copy(update={"llm": bad.llm.model_copy(update={"profiles": profiles})})
    with pytest.raises(CurllError, match="needs a GGUF file") as err:
        llm_models.run(bad)
    assert err.value.field == "llm_models.builtin.embedded"
