"""dvc.yaml takes every data path from params: a literal path would not follow a params change."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from curll.yamlio import dump_yaml, load_yaml

ROOT = Path(__file__).resolve().parents[2]
CODE = ("pipeline/", "src/curll/")  # the stage's own code is named by its place in the repo
# a param, or a file the stage names inside a folder that is a param (plots/diversity.csv, a
# foreach stage's ${item}, or the folder of the profile in use: ${llm.use})
PARAM_ROOTED = re.compile(r"^\$\{[A-Za-z0-9_.\-]+\}(/([A-Za-z0-9_.\-]|\$\{[A-Za-z0-9_.\-]+\})+)*$")


def paths(entries: list[Any]) -> list[str]:
    """The path of every dep, out, metric or plot entry (an entry is a path or {path: options})."""
    return [next(iter(e)) if isinstance(e, dict) else str(e) for e in entries]


def test_every_data_path_in_dvc_yaml_is_a_param():
    stages = load_yaml(ROOT / "dvc.yaml")["stages"]
    literal = [
        f"{name}.{field}: {path}"
        for name, stage in stages.items()
        for field in ("deps", "outs", "metrics", "plots")
        for path in paths(stage.get("do", stage).get(field, []))
        if not PARAM_ROOTED.match(path) and not path.startswith(CODE)
    ]
    assert literal == [], "write these as ${section.key} from params.yaml"


def stage_params(tmp_path: Path, params: dict[str, Any], *, files: bool = False) -> dict[str, set[str]]:
    """{stage: the params.yaml keys DVC resolves for it} for ``params``, read by DVC itself;
    with ``files``, the paths of its other deps (relative to the repo) instead."""
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    tmp_path.mkdir()
    (tmp_path / "dvc.yaml").write_text((ROOT / "dvc.yaml").read_text())
    dump_yaml(params, tmp_path / "params.yaml")
    Repo.init(str(tmp_path), no_scm=True)
    with Repo(str(tmp_path)) as repo:
        if files:
            return {
                s.name: {d.def_path for d in s.deps if not isinstance(d, ParamsDependency)}
                for s in repo.index.stages
            }
        return {
            s.name: {k for d in s.deps if isinstance(d, ParamsDependency) for k in d.params}
            for s in repo.index.stages
        }


def test_stages_asking_llm_use_depend_on_its_profile_alone(tmp_path):
    """An edit to a profile no stage of the run asks reruns none of the generation stages; a
    switch of ``llm.use`` points them at the new profile."""
    params = load_yaml(ROOT / "params.yaml")
    keys = stage_params(tmp_path / "a", params)
    for stage in ("skill_graph", "templates", "generate"):
        assert keys[stage] >= {"llm.use", "llm.attempts", f"llm.profiles.{params['llm']['use']}"}, stage
        assert not keys[stage] & {"llm", "llm.profiles", "llm.profiles.vllm"}, stage
    params["llm"]["use"] = "embedded"
    assert "llm.profiles.embedded" in stage_params(tmp_path / "b", params)["generate"]


def test_rater_and_judges_depend_on_their_own_profiles_alone(tmp_path):
    """split depends on ``split.rater``'s profile, each judge's stage on that judge's; adding a
    judge adds a stage. Each profile has its llm_models stage, which reads only that profile's
    backend and model (and which profiles are in use), and every LLM stage depends on the
    folder of its own profile: an edit to a profile no stage asks reruns nothing after it."""
    params = load_yaml(ROOT / "params.yaml")
    params["llm"]["use"] = "smollm2"
    params["split"]["rater"] = "embedded"
    params["evaluate"]["judges"] = ["smollm2-torch", "embedded"]
    keys = stage_params(tmp_path / "a", params)
    profiles = {s: {k for k in ks if k.startswith("llm.profiles")} for s, ks in keys.items()}
    assert profiles["split"] == {"llm.profiles.embedded"}
    assert profiles["evaluate_judge@smollm2-torch"] == {"llm.profiles.smollm2-torch"}
    assert profiles["evaluate_judge@embedded"] == {"llm.profiles.embedded"}
    assert "llm.use" not in keys["split"] | keys["evaluate_judge@embedded"]
    assert "evaluate.judges" not in keys["evaluate_judge@embedded"]  # another judge added: no rerun
    assert not [s for s, ks in profiles.items() if "llm.profiles" in ks]  # no stage reads all of them
    for name in params["llm"]["profiles"]:
        assert profiles[f"llm_models@{name}"] == {f"llm.profiles.{name}.{k}" for k in ("backend", "model")}
    folders = {
        s: {f.removeprefix("data/models/llm/") for f in fs if f.startswith("data/models/llm/")}
        for s, fs in stage_params(tmp_path / "b", params, files=True).items()
    }
    asking = {"skill_graph": "smollm2", "templates": "smollm2", "generate": "smollm2", "split": "embedded"}
    asking |= {f"evaluate_judge@{name}": name for name in ("smollm2-torch", "embedded")}
    assert {s: fs for s, fs in folders.items() if fs} == {s: {name} for s, name in asking.items()}


def test_split_release_declares_every_param_its_card_records(tmp_path):
    """The dataset card records the data stages' params and the profiles in use: the stage
    declares exactly those keys, so an edit the card would show reruns it, and an edit to a
    profile no data stage asks, or to a model stage's section, does not."""
    from curll.config import parse_params
    from pipeline.split_release import card_keys, card_params

    params = load_yaml(ROOT / "params.yaml")
    params["split"]["rater"] = "embedded"
    keys = stage_params(tmp_path / "repo", params)["split_release"]
    parsed = parse_params(params)
    assert keys == set(card_keys(parsed))
    card = card_params(parsed)
    assert set(card["llm"]["profiles"]) == {params["llm"]["use"], "embedded"}
    assert card["llm"]["profiles"]["embedded"]["backend"] == "transformers" and "cache" not in card["llm"]
    assert card["split"] == parsed.split.model_dump(mode="json") and not {"train", "evaluate"} & set(card)


def test_the_cards_data_sections_are_the_stages_up_to_split_release():
    """A stage added before split_release makes data the card must record."""
    from pipeline.split_release import DATA_SECTIONS
    from pipeline.tools.cli import STAGES

    names = list(STAGES)
    assert tuple(names[: names.index("split_release") + 1]) == DATA_SECTIONS
