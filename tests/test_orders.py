"""The order registry (:mod:`curll.orders`): the paper's three orders as specs, and an order
registered at run time known to the params, the planner, the schemas and the CL metrics."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from curll import orders
from curll.config import parse_params
from curll.errors import CurllError
from curll.evaluate.analysis import for_order
from curll.evaluate.cl import cl_metrics
from curll.schemas.evaluate import AnswerSchema, LossSchema, ScoreSchema, model_orders
from curll.train.orders import plan, saved_models
from curll.yamlio import load_yaml

ROOT = Path(__file__).resolve().parents[1]

#: continues from the previous stage's model on every stage so far (full replay)
WARM_JOINT = orders.OrderSpec("warm-joint", "previous", "cumulative", "M_0..k from M_0..k-1 on stages 0..k")


def test_the_paper_orders_plan_as_before():
    by_name = {r.name: r for o in orders.names() for r in plan(o, (0, 1, 2), seed=7, replay=0.5)}
    ind, joint, cont = (
        by_name["seed-7/independent/2"],
        by_name["seed-7/joint/0-1-2"],
        by_name["seed-7/continual/0-1-2"],
    )
    assert (ind.data_stages, ind.init_from, ind.replay_stages) == ((2,), None, ())
    assert (joint.data_stages, joint.init_from, joint.replay_stages) == ((0, 1, 2), None, ())
    assert (cont.data_stages, cont.init_from, cont.replay_stages) == ((2,), "seed-7/continual/0-1", (0, 1))
    plain = [o for o in orders.names() if not orders.spec(o).strategy]
    assert plain == ["independent", "joint", "continual"]
    assert [o for o in plain if orders.spec(o).sequential] == ["continual"]
    assert (orders.reference(), orders.bounds(orders.names())) == ("independent", ["joint"])


def test_strategies_are_compared_with_plain_continual_and_joint():
    assert orders.compared(["joint", "continual", "independent"]) == [
        ("independent", "joint"), ("independent", "continual"), ("joint", "continual")
    ]  # fmt: skip
    assert orders.compared(["continual", "continual-ewc", "continual-replay", "joint"]) == [
        ("joint", "continual"), ("joint", "continual-replay"), ("joint", "continual-ewc"),
        ("continual", "continual-replay"), ("continual", "continual-ewc"),
    ]  # fmt: skip
    assert orders.pair_of("joint-continual-replay") == ("joint", "continual-replay")
    assert orders.pair_of("continual-continual-replay-rewarm") == ("continual", "continual-replay-rewarm")


def test_an_order_the_stages_cannot_handle_is_refused():
    with pytest.raises(ValueError, match="need start 'previous'"):
        orders.OrderSpec("replayed-independent", "scratch", "stage", "x", carries=("replay",))
    with pytest.raises(ValueError, match="lower-case letters"):
        orders.OrderSpec("Warm_Joint", "previous", "cumulative", "x")


def test_a_registered_order_is_planned_from_its_spec_and_forgotten_after(tmp_path):
    with orders.register(WARM_JOINT):
        runs = plan("warm-joint", (1, 2, 4), seed=3)
        assert [r.name for r in runs] == [
            "seed-3/warm-joint/1",
            "seed-3/warm-joint/1-2",
            "seed-3/warm-joint/1-2-4",
        ]
        assert [r.data_stages for r in runs] == [(1,), (1, 2), (1, 2, 4)]
        assert [r.init_from for r in runs] == [None, "seed-3/warm-joint/1", "seed-3/warm-joint/1-2"]
        for r in runs:  # a saved model's seen stages are read back from its run's name
            (tmp_path / r.name).mkdir(parents=True)
            (tmp_path / r.name / "config.json").write_text("{}")
        assert [(m.seen, m.trained_to) for m in saved_models(tmp_path)] == [
            ((1,), 1),
            ((1, 2), 2),
            ((1, 2, 4), 4),
        ]
        assert orders.sequential(["joint", "warm-joint", "independent"]) == ["warm-joint"]
    assert "warm-joint" not in orders.names()
    with pytest.raises(KeyError, match="unknown order 'warm-joint'"):
        plan("warm-joint", (0, 1), seed=3)


def _params(order: Any) -> dict[str, Any]:
    data: dict[str, Any] = load_yaml(ROOT / "params.yaml")
    data = copy.deepcopy(data)
    data["train"]["order"] = order
    return data


def test_params_take_registered_orders_and_refuse_others_naming_the_key():
    with orders.register(WARM_JOINT):
        assert parse_params(_params(["joint", "warm-joint"])).train.orders == ("joint", "warm-joint")
    for bad in ("warm-joint", ["continual", "contnual"]):
        with pytest.raises(CurllError) as err:
            parse_params(_params(bad), source="params.yaml")
        assert str(err.value.field).startswith("train.order"), err.value.field
        assert (
            "unknown order" in err.value.message
            and "known: independent, joint, continual, continual-replay" in err.value.message
        )


def test_schemas_and_metrics_read_the_registry():
    column = pd.Series(["continual", "untrained", "warm-joint"])
    assert column.isin(model_orders()).tolist() == [True, True, False]
    checks = [
        c.name for s in (AnswerSchema, LossSchema, ScoreSchema) for c in s.to_schema().columns["order"].checks
    ]
    assert checks == ["a registered order or untrained"] * 3
    j = pd.DataFrame([[1.0, 0.0], [0.5, 2.0]], index=pd.Index([0, 1], name="trained_to"), columns=[0, 1])
    with orders.register(WARM_JOINT):
        assert for_order(cl_metrics(j), "warm-joint")["FGT"] is not None  # a sequence: forgetting defined
        assert column.isin(model_orders()).all()
    assert for_order(cl_metrics(j), "joint")["FGT"] is None
