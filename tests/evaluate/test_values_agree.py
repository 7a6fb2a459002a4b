"""The values the intervals are drawn around (curll.evaluate.values, on every bootstrap
replicate) and the values metrics.json reports (analysis and loss) are computed apart: on an
unweighted replicate they must be the same numbers, also where a model or a type has no score."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from curll.evaluate.analysis import order_metrics
from curll.evaluate.loss import loss_matrices, loss_metrics
from curll.evaluate.values import judge_values, loss_values
from tests.evaluate.test_analysis import scores
from tests.evaluate.test_loss import losses


def same(finals: dict[str, Any], values: dict[str, np.ndarray]) -> int:
    """Every final metric equals the values' entry of one unweighted replicate; returns how many."""
    n = 0
    for order, by_kind in finals.items():
        for kind, metrics in by_kind.items():
            for name, v in metrics.items():
                if name in ("T", "series", "unmeasured_stages"):
                    continue
                got = values.get(f"{order}/{kind}/{name}")
                assert got is not None, f"{order}/{kind}/{name} has no bootstrap value"
                x = float(got[0])
                if v is None or (isinstance(v, float) and math.isnan(v)):
                    assert math.isnan(x), f"{order}/{kind}/{name}: {x} where the finals have none"
                else:
                    assert x == pytest.approx(v), f"{order}/{kind}/{name}"
                n += 1
    return n


def test_judge_values_equal_the_finals_also_with_a_type_never_scored():
    table, kinds = scores(), ["ir", "cqa", "sum"]
    assert same(order_metrics(table, kinds), judge_values(table, np.ones((len(table), 1)), kinds)) > 20
    only_ir = table[table["type"] == "ir"].reset_index(drop=True)  # cqa is evaluated, yet nothing was scored
    finals = order_metrics(only_ir, kinds)
    assert finals["continual"]["sum"]["AP"] == pytest.approx(4.0)
    same({o: {k: v for k, v in by.items() if k != "cqa"} for o, by in finals.items()},
         judge_values(only_ir, np.ones((len(only_ir), 1)), kinds))  # fmt: skip


def test_loss_values_equal_the_finals_also_with_a_model_never_scored():
    table = losses().assign(unigram_nll=lambda d: 4.0 * d["tokens"])
    for unscored in (None, "continual/0-1"):
        t = table.copy()
        if unscored:
            t.loc[t["run"] == unscored, ["nll", "unigram_nll", "tokens"]] = [np.nan, np.nan, 0]
        finals = loss_metrics(loss_matrices(t, ["ir", "all"]), ["ir", "all"])
        assert same(finals, loss_values(t, np.ones((len(t), 1)), ["ir", "all"])) >= 8
