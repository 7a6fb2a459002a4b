"""The task registry the token-budget check walks: every prompt the params name is a task in it,
and each task goes to the profiles the params send it to."""

from __future__ import annotations

import copy
from pathlib import Path

from curll.config import parse_params, prompt_names
from curll.yamlio import load_yaml
from pipeline.tools.budget import registry, task_schemas

ROOT = Path(__file__).resolve().parents[2]


def params(**changes: object):
    data = copy.deepcopy(load_yaml(ROOT / "params.yaml"))
    for dotted, value in changes.items():
        *path, key = dotted.split("__")
        node = data
        for part in path:
            node = node[part]
        node[key] = value
    return parse_params(data, source="params.yaml")


def test_every_prompt_the_params_name_is_a_registered_task():
    """A task a stage asks but the registry lacks would escape the budget check."""
    p = params(evaluate__rubric__enabled=True)
    registered = {Path(str(t.prompt(p))).stem for t in registry() if t.profiles(p)}
    assert registered == prompt_names(p)


def test_tasks_go_to_the_profiles_the_params_name():
    p = params(
        split__rater="embedded", evaluate__judges=["smollm2-torch", "embedded"], evaluate__types=["cqa"]
    )
    schemas = task_schemas(p)
    assert set(schemas) == {"smollm2", "embedded", "smollm2-torch"}
    assert {"context", "ir", "cqa", "csqa", "templates", "edge", "edge weight"} <= set(schemas["smollm2"])
    assert set(schemas["smollm2-torch"]) == {"judge rating (cqa)"}  # one type judged, no rubric
    assert set(schemas["embedded"]) == {"quality rating", "judge rating (cqa)"}
    # each judge's schema is made with its own caps
    caps = p.llm.profiles["embedded"].max_chars.short
    explanation = schemas["embedded"]["quality rating"]["properties"]["explanation"]
    assert explanation["maxLength"] == caps
