"""The llm_models@<profile> stage makes exactly one profile ready: a profile in use gets its
built-in model built (a converted GGUF or the random model), its GGUF checked and hashed
(llamacpp), or its name recorded (a server); a profile no stage asks is only recorded, so a
missing file of an unused profile is no error. A GGUF whose sha256 differs from the params is
refused, naming the key, and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from curll.config import parse_params
from curll.errors import CurllError
from curll.llm.gguf import sha256_file
from curll.yamlio import load_yaml
from tests.llm.test_gguf import write_tiny_gguf

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gguf_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    write_tiny_gguf(path)
    return path


def params(tmp_path: Path, use: str, judges: list[str], gguf: Path | None = None, sha: str = "") -> Any:
    data = load_yaml(ROOT / "params.yaml")
    data["llm"]["use"] = use
    data["split"]["rater"] = use  # only use and the judges are in use here
    data["evaluate"]["judges"] = judges
    data["llm_models"]["out"] = {"dir": str(tmp_path / "models"), "stats": str(tmp_path / "stats")}
    embedded = data["llm_models"]["builtin"]["embedded"]
    embedded["corpus"] = str(ROOT / embedded["corpus"])
    if gguf is not None:
        data["llm_models"]["builtin"]["tiny-gguf"] = {"kind": "gguf", "file": str(gguf), "sha256": sha}
        data["llm"]["profiles"]["smollm2"]["model"] = "tiny-gguf"  # llamacpp: served as it is
        data["llm"]["profiles"]["smollm2-torch"]["model"] = "tiny-gguf"  # transformers: converted
    return parse_params(data)


def run_all(p: Any) -> dict[str, dict[str, Any]]:
    """Every profile's stage, as `dvc repro` runs them; {profile: source.json}."""
    from pipeline import llm_models

    for name in p.llm.profiles:
        llm_models.run(p, name)
    models = Path(p.llm_models.out.dir)
    return {name: json.loads((models / name / "source.json").read_text()) for name in p.llm.profiles}


def built(tmp_path: Path) -> set[str]:
    return {p.parent.name for p in (tmp_path / "models").glob("*/model")}


def test_only_the_profiles_in_use_are_built(tmp_path, gguf_file):
    sha = sha256_file(gguf_file)
    sources = run_all(params(tmp_path, "smollm2-torch", ["smollm2-torch"], gguf_file, sha))
    assert built(tmp_path) == {"smollm2-torch"}  # the random model is not built when nothing asks it
    assert sources["smollm2-torch"] == {
        "profile": "smollm2-torch", "backend": "transformers", "model": "tiny-gguf", "in_use": True,
        "loads": str(tmp_path / "models" / "smollm2-torch" / "model")}  # fmt: skip
    assert sources["embedded"] == {"profile": "embedded", "backend": "transformers", "model": "embedded",
                                   "in_use": False}  # fmt: skip
    stats = json.loads((tmp_path / "stats" / "smollm2-torch.json").read_text())
    assert stats["built"]["eos"] == "<|im_end|>" and len(stats["built"]["fingerprint"]) == 12
    assert json.loads((tmp_path / "stats" / "server.json").read_text())["built"] == {}

    run_all(params(tmp_path, "smollm2-torch", ["smollm2-torch", "embedded"], gguf_file, sha))
    assert built(tmp_path) == {"smollm2-torch", "embedded"}  # a judge panel with both

    sources = run_all(params(tmp_path, "smollm2", ["smollm2"], gguf_file, sha))
    assert built(tmp_path) == set()  # llama.cpp serves the file: nothing converted, old folders replaced
    assert sources["smollm2"] == {"profile": "smollm2", "backend": "llamacpp", "model": "tiny-gguf",
                                  "in_use": True, "loads": str(gguf_file), "sha256": sha}  # fmt: skip

    sources = run_all(params(tmp_path, "server", ["server"]))
    assert built(tmp_path) == set()
    assert sources["server"]["in_use"] and sources["server"]["loads"] == sources["server"]["model"]


def test_an_unused_profile_whose_model_is_missing_is_no_error(tmp_path, gguf_file):
    from pipeline import llm_models

    p = params(tmp_path, "embedded", ["embedded"], gguf_file, "0" * 64)  # smollm2's sha is wrong
    served = p.llm.profiles["smollm2"].model_copy(update={"model": str(tmp_path / "gone.gguf")})
    profiles = {**p.llm.profiles, "smollm2": served}
    p = p.model_copy(update={"llm": p.llm.model_copy(update={"profiles": profiles})})
    llm_models.run(p, "smollm2")
    assert json.loads((tmp_path / "models" / "smollm2" / "source.json").read_text())["in_use"] is False
    llm_models.run(p, "smollm2-torch")  # its sha256 is wrong too, but no stage asks it


@pytest.mark.parametrize("profile", ["smollm2-torch", "smollm2"])
def test_a_gguf_of_another_release_is_refused(tmp_path, gguf_file, profile):
    from pipeline import llm_models

    with pytest.raises(CurllError, match="sha256 is") as err:
        llm_models.run(params(tmp_path, profile, [profile], gguf_file, "0" * 64), profile)
    assert err.value.field == "llm_models.builtin.tiny-gguf.sha256"
    for folder in ("models", "stats"):  # nothing written
        assert not (tmp_path / folder).exists() or not any((tmp_path / folder).iterdir())


def test_a_llamacpp_profile_needs_a_gguf_model(tmp_path, gguf_file):
    from pipeline import llm_models

    bad = params(tmp_path, "smollm2", ["smollm2"], gguf_file, sha256_file(gguf_file))
    served = bad.llm.profiles["smollm2"].model_copy(update={"model": "embedded"})  # a random model
    profiles = {**bad.llm.profiles, "smollm2": served}
    bad = bad.model_copy(update={"llm": bad.llm.model_copy(update={"profiles": profiles})})
    with pytest.raises(CurllError, match="needs a GGUF file") as err:
        llm_models.run(bad, "smollm2")
    assert err.value.field == "llm_models.builtin.embedded"


def test_an_unknown_profile_is_an_error(tmp_path):
    from pipeline import llm_models

    with pytest.raises(CurllError, match=r"'nope' is not one of llm.profiles"):
        llm_models.run(params(tmp_path, "embedded", ["embedded"]), "nope")


def test_a_profile_loads_its_own_built_folder(tmp_path):
    """A backend of a built-in model loads the folder its profile's stage built, and names the
    stage to run when it is missing."""
    from curll.llm.sources import model_source

    p = params(tmp_path, "embedded", ["embedded"])
    with pytest.raises(CurllError, match=r"run `dvc repro llm_models@embedded`"):
        model_source("embedded", "embedded", p.llm_models)
    run_all(p)
    assert model_source("embedded", "embedded", p.llm_models) == str(tmp_path / "models/embedded/model")
    assert model_source("server", "google/x", p.llm_models) == "google/x"  # not a built-in: as named
