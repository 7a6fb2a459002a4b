"""Compute per order (``train.budget``) and the learning-rate schedule across continual stages
(``optim.rewarm``), with real tiny models on three stages of unequal size (6, 14, 3 records)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
import pytest

from curll.errors import CurllError
from curll.llm.bpe import train_bpe
from curll.train.data import Parts, encode, pack
from curll.train.orders import budget_order, fill, plan
from curll.train.runs import Budget, run_order
from curll.train.trainer import lr_at
from pipeline.train import steps_per_stage
from tests.train.test_trainer import P, on_disk, records

SIZES = {0: 6, 1: 14, 2: 3}  # records per stage: one packed row each at context 48
ORDERS = ("independent", "joint", "continual")


@pytest.fixture(scope="module")
def tok():
    return train_bpe([f"Question {i}? The answer is {i * 7}. Cats and dogs play." for i in range(50)], 320)


def frame() -> pd.DataFrame:
    parts: list[pd.DataFrame] = [records(n, (s,)) for s, n in SIZES.items()]
    return pd.concat(parts, ignore_index=True)


def params(tmp_path, **kw: Any):
    out = P.out.model_copy(update={"models": str(tmp_path / "m"), "checkpoints": str(tmp_path / "c")})
    base = {"order": ORDERS, "stages": (0, 1, 2), "context": 48, "batch": 4, "micro_batch": 4, "epochs": 1}
    return P.model_copy(update={**base, "out": out, **kw})


def trained(tok, tmp_path, p) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return run_order(on_disk(frame(), tmp_path), tok, p)


def test_budget_data_keeps_the_step_counts_of_one_pass_per_run(tok, tmp_path):
    """The numbers the code before ``train.budget`` gave for these records (epochs 1, batch 4)."""
    metrics, _ = trained(tok, tmp_path, params(tmp_path))
    steps = {k.removeprefix("seed-42/"): v["steps"] for k, v in metrics.items()}
    assert steps == {"independent/0": 2, "independent/1": 4, "independent/2": 1, "joint/0": 2,
                     "joint/0-1": 5, "joint/0-1-2": 6, "continual/0": 2, "continual/0-1": 4,
                     "continual/0-1-2": 1}  # fmt: skip
    assert [metrics[f"seed-42/joint/{s}"]["rows"] for s in ("0", "0-1", "0-1-2")] == [6, 20, 23]
    joint, cont = metrics["seed-42/joint/0-1-2"]["compute"], metrics["seed-42/continual/0-1-2"]["compute"]
    assert list(joint["stages"]) == ["0-1-2"]  # one pack: its rows mix the stages
    assert (joint["rows"], cont["cumulative"]["rows"]) == (23, 23)  # the same rows...
    assert (joint["steps"], cont["cumulative"]["steps"]) == (6, 7)  # ...in unequal steps
    assert steps_per_stage("data", metrics) is None


def test_budget_steps_gives_every_order_the_same_steps_and_rows_per_stage(tok, tmp_path, monkeypatch):
    import curll.train.runs as runs

    outcomes: dict[str, Any] = {}
    real = runs.train  # type: ignore[attr-defined]

    def spy(model, data, s, **kw):
        outcomes[kw["desc"].removeprefix("train seed-42/")] = out = real(model, data, s, **kw)
        return out

    monkeypatch.setattr(runs, "train", spy)
    metrics, _ = trained(tok, tmp_path, params(tmp_path, budget="steps"))
    c = {k.removeprefix("seed-42/"): v["compute"] for k, v in metrics.items()}
    s = 4  # ceil(epochs 1 x 14 rows of the largest stage / batch 4)
    assert steps_per_stage("steps", metrics) == {"0": s, "1": s, "2": s}
    for k in (0, 1, 2):
        alone = {"steps": s, "rows": s * 4}
        assert {key: c[f"independent/{k}"]["stages"][str(k)][key] for key in alone} == alone
        assert {key: c["joint/0-1-2"]["stages"][str(k)][key] for key in alone} == alone
        assert {key: c["continual/0-1-2"]["cumulative"]["stages"][str(k)][key] for key in alone} == alone
    for label in ("0", "0-1", "0-1-2"):  # joint 0..k is continual up to k: steps, rows, loss tokens
        joint, cont = c[f"joint/{label}"], c[f"continual/{label}"]["cumulative"]
        assert joint == {**cont, "cumulative": cont}
        assert joint["steps"] == s * (label.count("-") + 1) == outcomes[f"joint/{label}"].steps
    # a stage gives the same rows in every order: equal loss tokens, not only equal rows
    assert (
        c["independent/1"]["stages"]["1"]
        == c["joint/0-1"]["stages"]["1"]
        == c["continual/0-1"]["stages"]["1"]
    )
    for name, out in outcomes.items():  # what the trainer consumed is what compute reports
        assert (out.steps, out.trained) == (c[name]["steps"], c[name]["loss_tokens"]), name
        assert metrics[f"seed-42/{name}"]["steps"] == c[name]["steps"]


def test_s_is_one_epochs_pass_over_the_largest_stage_or_the_param(tok, tmp_path):
    data = on_disk(frame(), tmp_path)
    runs = plan("joint", (0, 1, 2), seed=42)
    p = params(tmp_path, budget="steps", epochs=3)
    assert Budget(data, tok, p, runs).steps_of == {0: 11, 1: 11, 2: 11}  # ceil(3 x 14 / 4)
    fixed = Budget(data, tok, params(tmp_path, budget="steps", steps_per_stage=2), runs)
    parts, steps = fixed.data(runs[2])
    assert steps == [2, 2, 2] and parts.labels == ["0", "1", "2"]
    assert [q.rows for q in parts.parts] == list(SIZES.values())  # each stage packed alone
    assert len(fixed.order(runs[2], parts, steps)) == 3 * 2 * 4


def test_the_joint_mixture_draws_each_stage_in_proportion_to_its_steps():
    starts, steps, batch = [0, 5, 12, 14], [3, 1, 2], 4
    order = budget_order(starts, steps, (0, 1, 2), batch=batch, seed=7)
    part = np.searchsorted(starts, order, side="right") - 1
    assert Counter(part.tolist()) == {0: 12, 1: 4, 2: 8}  # steps[j] x batch rows of part j
    assert order.tolist() == budget_order(starts, steps, (0, 1, 2), batch=batch, seed=7).tolist()
    assert order.tolist() != budget_order(starts, steps, (0, 1, 2), batch=batch, seed=8).tolist()
    assert any(len(set(part[i : i + batch])) > 1 for i in range(0, len(part), batch))  # steps mix stages
    for j in range(3):  # every row of a part as often as the others, give or take one
        uses = Counter(order[part == j].tolist())
        assert set(uses) <= set(range(starts[j], starts[j + 1]))
        assert max(uses.values()) - min(uses.values()) <= 1
    alone = budget_order([0, 7], [1], (1,), batch=batch, seed=7)  # stage 1 trained alone
    assert sorted(alone.tolist()) == sorted((order[part == 1] - 5).tolist())


def test_fill_repeats_whole_passes_then_cuts():
    rows = fill(3, 7, np.random.default_rng(0))
    assert len(rows) == 7 and sorted(rows[:3]) == sorted(rows[3:6]) == [0, 1, 2]
    assert len(fill(5, 2, np.random.default_rng(0))) == 2 and len(fill(5, 0, np.random.default_rng(0))) == 0


def test_parts_read_as_one(tok):
    texts = records(4, (0,))["messages"].tolist()
    a = pack(encode(texts[:2], tok, loss="assistant"), 48, pad_id=tok.pad_token_id)
    b = pack(encode(texts[2:], tok, loss="assistant"), 48, pad_id=tok.pad_token_id)
    both = Parts([a, b], ["0", "1"])
    assert both.rows == a.rows + b.rows and both.part_of([0, a.rows]).tolist() == [0, 1]
    mixed = both.batch([a.rows, 0])
    for name, arr in mixed.items():
        assert np.array_equal(arr[0], b.batch([0])[name][0]) and np.array_equal(arr[1], a.batch([0])[name][0])
    assert both.loss_tokens([0, a.rows]) == a.loss_tokens([0]) + b.loss_tokens([0])
    assert Parts([a], ["0"]).stats() == a.stats() and both.stats()["rows"] == both.rows


def test_a_stage_without_a_fitting_record_is_named(tok, tmp_path):
    p = params(tmp_path, budget="steps", order=("joint",), context=4)
    runs = plan("joint", (0, 1, 2), seed=42)
    with pytest.raises(CurllError, match=r"none of the 6 train records of stage 0 fits") as err:
        Budget(on_disk(frame(), tmp_path), tok, p, runs)  # refused before any run is packed
    assert err.value.field == "train.context"


def lrs(log: list[dict[str, Any]], run: str) -> list[float]:
    return [r["lr"] for r in log if r["run"] == f"seed-42/continual/{run}"]


@pytest.mark.parametrize("budget", ["steps", "data"])
def test_rewarm_restarts_the_warmup_at_each_continual_stage(tok, tmp_path, budget):
    def run(rewarm: bool) -> list[dict[str, Any]]:
        optim = P.optim.model_copy(update={"schedule": "cosine", "warmup": 0.5, "rewarm": rewarm})
        extra = {"steps_per_stage": 4} if budget == "steps" else {}
        p = params(
            tmp_path / str(rewarm), order="continual", stages=(0, 1), optim=optim, budget=budget, **extra
        )
        return trained(tok, tmp_path, p)[1]

    again, once = run(True), run(False)
    first, second = lrs(again, "0"), lrs(again, "0-1")
    assert [len(first), len(second)] == ([4, 4] if budget == "steps" else [2, 4])
    assert second == [lr_at(i, len(second), P.optim.model_copy(update={"schedule": "cosine", "warmup": 0.5}))
                      for i in range(len(second))]  # fmt: skip
    if budget == "steps":  # equal stages: the second starts as the first did
        assert second[0] == first[0] == P.optim.lr / 2
    whole = lrs(once, "0") + lrs(once, "0-1")  # one schedule over both stages
    o = P.optim.model_copy(update={"schedule": "cosine", "warmup": 0.5})
    assert whole == [lr_at(i, len(whole), o) for i in range(len(whole))]
    assert lrs(once, "0-1")[0] != lrs(once, "0")[0] and lrs(once, "0-1")[0] != second[0]


def test_tokens_are_the_tokens_trained_and_packed_tokens_one_pass(tok, tmp_path):
    """Three epochs train every packed row three times: ``tokens`` (and tokens/s) count them all."""
    metrics, _ = trained(tok, tmp_path, params(tmp_path, order=("independent",), epochs=3))
    for name, m in metrics.items():
        assert m["packed_tokens"] > 0, name
        assert m["tokens"] == 3 * m["packed_tokens"], name
