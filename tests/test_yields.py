"""Yields: measured per stage and type (weights, expected groups), and a low one stops the stage
with its reasons; a stage whose backend fails every request exits non-zero and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from curll.config import parse_params
from curll.yamlio import load_yaml
from curll.yields import YieldError, check_yields, measure, public
from harness.server import FakeChatServer

ROOT = Path(__file__).resolve().parents[1]


def units(rows: list[tuple[int, str, bool, str, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["stage", "type", "kept", "reason", "weight"])


def test_measure_weights_reasons_and_expected_groups():
    y = measure(
        units(
            [
                (0, "context", True, "", 1),
                (0, "context", False, "words: 12 not in [40, 250]", 1),
                (0, "cqa", False, "unparsed: invalid JSON", 5),
                (0, "cqa", True, "", 1),
            ]
        ),
        expected=[(1, "context")],
    )
    assert y["context"]["0"] == {"in": 2, "kept": 1, "yield": 0.5, "reasons": {"words": 1},
                                 "examples": {"words": "12 not in [40, 250]"}}  # fmt: skip
    assert y["cqa"]["0"]["in"] == 6 and y["cqa"]["0"]["yield"] == round(1 / 6, 6)
    assert y["context"]["1"]["in"] == 0 and y["context"]["1"]["yield"] == 0.0  # expected, never made
    assert "examples" not in public(y)["context"]["0"]


def test_units_with_a_detail_column_give_the_code_alone_and_keep_the_detail_whole():
    """verify's drops: code and detail apart (curll.verify.verdict), never split on a colon."""
    units = pd.DataFrame({"stage": [0, 0, 0], "type": "ir", "kept": [False, False, True],
                          "reason": ["unparsed", "unparsed", ""],
                          "detail": ["schema: missing response", "", ""]})  # fmt: skip
    y = measure(units)["ir"]["0"]
    assert y["reasons"] == {"unparsed": 2} and y["examples"] == {"unparsed": "schema: missing response"}


def test_check_names_every_low_group_with_its_top_reasons():
    y = measure(units([(2, "context", False, "words: 9 not in [40, 250]", 1)] * 3 + [(2, "ir", True, "", 1)]))
    with pytest.raises(YieldError) as err:
        check_yields("verify", y, {"context": 0.2, "ir": 0.2}, key="verify.min_yield")
    msg = str(err.value)
    assert "verify: too little kept (verify.min_yield)" in msg
    assert "stage 2 context: 0 of 3 kept (0.0%, minimum 20%); words 3 (e.g. '9 not in [40, 250]')" in msg
    assert "stage 2 ir" not in msg
    check_yields("verify", y, {"ir": 0.5}, key="verify.min_yield")  # context has no floor: passes


def test_generate_stops_when_the_server_fails_every_request(tmp_path):
    from pipeline import generate

    seeds = pd.DataFrame(
        [
            {
                "seed_id": f"{i:016x}",
                "indicator_id": "a" * 16,
                "stage": 0,
                "age_group": "5-6",
                "skill": "s",
                "subskill": "u",
                "goal": "g",
                "indicator": "Counts to ten",
                "type": t,
                "template": "a story",
                "word": "cat",
                "pos": "Noun",
            }
            for i, t in enumerate(["context", "ir", "ir"])
        ]
    )
    seeds.to_parquet(tmp_path / "seeds.parquet", index=False)
    data = load_yaml(ROOT / "params.yaml")
    with FakeChatServer() as server:
        server.script.extend(["500"] * 1000)
        prof = data["llm"]["profiles"]["server"]
        prof.update(base_url=server.base_url, max_retries=1, timeout_s=5)
        # kept as rejects, so the yield floor is what stops it (llm.failures: stop would stop first)
        data["llm"].update(use="server", cache=str(tmp_path / "cache.sqlite"), attempts=2, failures="reject")
        data["seeds"]["out"]["seeds"] = str(tmp_path / "seeds.parquet")
        data["generate"]["out"]["shards"] = str(tmp_path / "shards")
        for name, prompt in data["generate"]["prompts"].items():
            data["generate"]["prompts"][name] = str(ROOT / prompt)
        with pytest.raises(YieldError) as err:
            generate.run(parse_params(data))
    msg = str(err.value)
    assert "generate: shard 0/1: too little kept (generate.min_yield)" in msg
    assert "stage 0 context: 0 of 1 kept" in msg and "stage 0 ir: 0 of 2 kept" in msg
    assert "stage 0 cqa: 0 of 0 kept" in msg  # never asked: its passage failed
    assert "InternalServerError" in msg and "boom" in msg
    assert not list((tmp_path / "shards").glob("*.parquet"))  # nothing written
