"""The skill graph's LLM calls at the paper's size (1,343 indicators, stages 0-4): the default
strategy stays under 20 first-attempt calls per indicator; all pairs would be ~1,342."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.skill_graph_calls import calls, synthetic_taxonomy
from curll.config import load_params
from curll.schemas import IndicatorSchema
from tests.conftest import reference_file

ROOT = Path(__file__).resolve().parents[2]


def default_calls(ind) -> float:
    p = load_params(ROOT / "params.yaml").skill_graph
    got = calls(ind, p.candidates, neighbours=p.neighbours, max_stage_gap=p.max_stage_gap)
    return float(got["max calls per indicator"])  # type: ignore[arg-type]


def test_the_default_strategy_asks_under_20_calls_per_indicator_at_paper_size():
    ind = IndicatorSchema.validate(synthetic_taxonomy())
    assert len(ind) == 1343
    assert default_calls(ind) < 20
    assert calls(ind, "all")["pairs"] == 1343 * 1342 // 2


@pytest.mark.reference
def test_the_same_on_the_authors_taxonomy():
    from curll.taxonomy import import_taxonomy

    folder = reference_file("curll-taxonomy")
    ind = import_taxonomy("curll-csv", sorted(folder.glob("*.csv")), stages=range(5)).table
    assert len(ind) == 1343
    assert default_calls(ind) < 20
