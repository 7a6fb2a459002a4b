"""The scale harness (bench/scale.py) end to end at a small N: every stage after generate runs
on its synthetic inputs and is measured, and verify finds the planted duplicates."""

from __future__ import annotations

import pytest

from bench.scale import StageRun, main, table
from curll.yamlio import load_yaml
from tests.repro import Reproduced


def test_growth_is_the_4n_time_over_four_times_the_n_time():
    runs = [StageRun("verify", 10, 10, 2.0, 0.5), StageRun("verify", 40, 40, 10.0, 0.9)]
    [row] = table(runs, 10)
    assert row["growth"] == 1.25 and row["peak_rss_4n_gib"] == 0.9 and row["rows_per_s"] == 5


@pytest.mark.slow  # about 40 s: see docs/tests.md
def test_the_harness_measures_every_stage_and_verify_finds_the_planted_copies(
    reproduced: Reproduced, tmp_path
):
    params = load_yaml(reproduced.path / "params.yaml")
    encoder = reproduced.path / params["verify_encoder"]["out"]["model"]  # distilled once per session
    result = main(["--n", "1500", "--no-4n", "--per-stage", "2", "--work", str(tmp_path),
                   "--encoder", str(encoder)])  # fmt: skip
    stages = {row["stage"]: row for row in result["stages"]}
    assert list(stages) == ["generate_merge", "verify", "split", "split_release", "tokenizer", "loader"]
    for row in stages.values():
        assert not row["failed"] and row["wall_s"] > 0 and row["peak_rss_gib"] > 0 and row["rows"] > 0
    planted, dropped = result["verify_dropped"]["planted"], result["verify_dropped"]["dropped"]
    assert planted["instances"] == stages["verify"]["rows"] >= 1500
    for kind in ("context", "ir"):
        copies = planted.get(f"{kind} exact", 0) + planted.get(f"{kind} near", 0)
        found = dropped[kind].get("exact_duplicate", 0) + dropped[kind].get("near_duplicate", 0)
        assert copies > 0 and found >= 0.8 * copies, (kind, planted, dropped)
