from __future__ import annotations

import copy
from pathlib import Path

from curll.config import parse_params
from curll.generate.tasks import tasks
from curll.llm.factory import make_task
from curll.yamlio import load_yaml

ROOT = Path(__file__).resolve().parents[2]


def test_a_task_gets_its_own_sampling_by_prompt_name():
    data = load_yaml(ROOT / "params.yaml")
    data = copy.deepcopy(data)
    data["llm"]["use"] = "embedded"
    data["llm"]["profiles"]["embedded"]["task_sampling"] = {"context": {"frequency_penalty": 0.5}}
    params = parse_params(data, source="params.yaml")
    llm = params.llm
    context = make_task(params, tasks()["context"])
    cqa = make_task(params, tasks()["cqa"])
    assert context.sampling.frequency_penalty == 0.5
    assert cqa.sampling == llm.profile.sampling.to_sampling()
    # the changed sampling travels in the request (and so in its cache key)
    row = {"stage": 0, "age_group": "5-6", "indicator": "x", "skill": "s", "subskill": "t", "goal": "g",
           "word": "dog", "pos": "Noun", "template": "a story"}  # fmt: skip
    assert context.request(row).sampling.frequency_penalty == 0.5
