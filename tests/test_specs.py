"""Adding an instance type or a training order is adding its spec: a toy type (true/false
statements on a passage) and a toy order (each stage's model continues from the previous one
on every stage so far) are registered here, in the test, and the whole pipeline runs them on
the random model, stage module by stage module in this process: generate, verify, split,
train and evaluate. Nothing else in the code knows them. What they touch besides the spec is
data: the type's two prompt files (generation and judge) and its params entries (its prompt
paths, its items per request, the test types); the order, one params value."""

from __future__ import annotations

import importlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from curll import instances, orders
from curll.config import Params, parse_params
from curll.evaluate.findings import Claim
from curll.instances import InstanceType
from curll.orders import OrderSpec
from curll.yamlio import dump_yaml, load_yaml
from tests.repro import CURRICULUM, ROOT, shrink

TRUE_FALSE = InstanceType(
    "tf", "true/false statements on passages", ("statement", "verdict"), ("statement", "verdict"),
    long=(), prompt="statement", reply="verdict", user="{passage}\n\nTrue or false? {statement}",
    compared=("statement", "verdict"), on="context", pairs="statements", block="True or false",
    evaluated=True,
)  # fmt: skip
WARM_JOINT = OrderSpec("warm-joint", "previous", "cumulative", "M_0..k from M_0..k-1 on stages 0..k")

STAGES = (
    "taxonomy", "vocab", "llm_models", "skill_graph", "templates", "seeds", "generate", "generate_merge",
    "verify_encoder", "verify", "split", "split_release", "tokenizer", "train", "evaluate_infer",
    "evaluate_loss", "evaluate_judge", "evaluate_panel", "evaluate",
)  # fmt: skip


def _params(encoder: Path) -> dict[str, Any]:
    params = shrink(load_yaml(ROOT / "params.yaml"), encoder)
    params["generate"]["prompts"]["tf"] = "prompts/tf.j2"
    params["generate"]["pairs"]["tf"] = 1
    params["evaluate"]["types"] = [*params["evaluate"]["types"], "tf"]
    params["evaluate"]["prompts"]["tf"] = "prompts/judge_tf.j2"
    params["evaluate"]["rubric"]["enabled"] = False
    params["train"]["order"] = ["independent", "warm-joint"]
    params["train"]["seeds"] = [42]
    return params


def _run(stage: str, params: Params) -> None:
    module = importlib.import_module(f"pipeline.{stage}")
    if stage == "llm_models":
        for name in params.llm.profiles:
            module.run(params, name)
    elif stage == "evaluate_judge":
        for name in params.evaluate.judges:
            module.run(params, name)
    else:
        module.run(params)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, encoder_folder: Path) -> Iterator[Path]:
    """The shrunk pipeline (tests/repro.py) with the toy type and order, run in this process."""
    root = tmp_path_factory.mktemp("specs")
    for name, src in CURRICULUM.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / "tests" / "data" / src, root / name)
    shutil.copytree(ROOT / "prompts", root / "prompts")
    shutil.copytree(ROOT / "src" / "curll" / "resources", root / "src" / "curll" / "resources")
    (root / "prompts" / "tf.j2").write_text(
        "{% block system -%}\nWrite statements about a passage that are true or false. Reply with JSON."
        "\n{%- endblock %}\n{% block user -%}\nPassage:\n{{ context }}\n\nWrite {{ n_pairs }} statements, "
        'each with its verdict ("true" or "false").\n{%- endblock %}\n'
    )  # fmt: skip
    (root / "prompts" / "judge_tf.j2").write_text(
        "{% block system -%}\nMark a child's verdict on a statement about a passage, 1 to 5. Reply with "
        "JSON.\n{%- endblock %}\n{% block user -%}\nPassage:\n{{ context }}\n\nStatement: {{ question }}"
        "\nVerdict key: {{ reference }}\nChild's verdict: {{ answer }}\n{%- endblock %}\n"
    )  # fmt: skip
    with instances.register(TRUE_FALSE), orders.register(WARM_JOINT), pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        data = _params(encoder_folder)
        dump_yaml(data, root / "params.yaml")
        params = parse_params(data)
        for stage in STAGES:
            _run(stage, params)
        yield root


def test_a_registered_instance_type_runs_from_generation_to_its_evaluation(project: Path):
    tf = pd.read_parquet(project / "data/verify/tables/tf.parquet")
    assert len(tf) and list(tf.columns[-5:]) == ["context_id", "type", "q_index", "statement", "verdict"]
    generated = json.loads((project / "data/generate/stats.json").read_text())
    assert generated["instances"]["tf"] == len(pd.read_parquet(project / "data/generate/tables/tf.parquet"))
    records = pd.read_parquet(project / "data/split/records.parquet")
    mine = records[records["type"] == "tf"]
    passages = set(records.loc[records["type"] == "context", "unit_id"])
    assert len(mine) and set(mine["unit_id"]) <= passages  # moves with its passage's unit
    user = json.loads(mine["messages"].iloc[0])[-2]["content"]
    assert "\n\nTrue or false? " in user  # its own chat layout
    items = pd.read_parquet(project / "data/evaluate/items.parquet")
    tf_items = items[items["type"] == "tf"]
    assert len(tf_items) and (tf_items["context"] != "").all()  # asked with its passage
    assert not tf_items["question"].str.startswith("True or false?").any()  # the label is taken off
    ratings = pd.read_parquet(project / "data/evaluate/ratings.parquet")
    assert "tf" in set(ratings["type"])
    losses = pd.read_parquet(project / "data/evaluate/losses.parquet")
    assert "tf" in set(losses["type"])
    metrics = json.loads((project / "data/evaluate/metrics.json").read_text())
    assert "tf" in metrics["loss"]["independent"]
    assert (project / "data/evaluate/matrices/loss_independent_tf.csv").is_file()
    card = (project / "data/release/dataset/README.md").read_text()
    assert "true/false statements on passages (tf)" in card


def test_a_registered_order_is_trained_and_evaluated_as_a_sequence(project: Path):
    models = project / "data/train/models/seed-42/warm-joint"
    assert sorted(p.name for p in models.iterdir()) == ["6", "6-7"]
    trained = json.loads((project / "data/train/metrics.json").read_text())
    run = trained["runs"]["seed-42/warm-joint/6-7"]
    assert run["compute"]["cumulative"]["steps"] > run["steps"]  # it went on from the stage-6 model
    metrics = json.loads((project / "data/evaluate/metrics.json").read_text())
    loss = metrics["loss"]["warm-joint"]["all"]
    assert "FGT_nll_rise" in loss and "BWT_nll_fall" in loss  # a sequence: forgetting is defined
    assert "FGT_nll_rise" not in metrics["loss"]["independent"]["all"]
    assert "FWT_nll_fall" in loss  # against the reference order's models
    assert (project / "data/evaluate/curves/warm-joint.csv").is_file()
    assert "warm-joint" in metrics["baseline"]["orders"]
    claim = next(
        c for c in metrics["claims"]["list"] if c["key"] == "diff/independent-warm-joint/all/mean_nll"
    )
    assert Claim(**claim).sentence().startswith("independent - warm-joint: difference in mean NLL")
