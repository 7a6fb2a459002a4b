"""verify_files streams: batches of any size give the same files and metrics; a failure
(a yield too low, pairs of a passage apart) names its cause and leaves no output behind."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from curll.artifacts import read_table, write_table
from curll.errors import CurllError
from curll.instances import TYPES
from curll.schemas import GenerationSchema, RejectSchema, instance_schema
from curll.verify.core import verify_files
from curll.yields import YieldError
from tests.verify.test_core import planted


def write_inputs(where: Path, tables: dict[str, pd.DataFrame], gens: pd.DataFrame) -> dict[str, Path]:
    paths = {k: where / f"{k}.parquet" for k in TYPES}
    for k in TYPES:
        write_table(tables[k], paths[k], instance_schema(k))
    write_table(gens, where / "generations.parquet", GenerationSchema)
    return paths


def run(where: Path, inputs: dict[str, Path], encoder, settings, batch_rows: int) -> dict[str, Any]:
    out = where / f"out-{batch_rows}"
    out.mkdir()
    outputs = {k: out / f"{k}.parquet" for k in TYPES}
    metrics = verify_files(inputs, inputs["context"].parent / "generations.parquet", outputs,
                           out / "rejects.parquet", encoder, settings, batch_rows=batch_rows)  # fmt: skip
    files = {k: read_table(outputs[k], instance_schema(k)) for k in TYPES}
    return {"files": files, "rejects": read_table(out / "rejects.parquet", RejectSchema), "metrics": metrics}


def test_any_batch_size_gives_the_same_outputs(tmp_path, encoder):
    tables, gens, settings = planted()
    inputs = write_inputs(tmp_path, tables, gens)
    whole = run(tmp_path, inputs, encoder, settings, batch_rows=10_000)
    assert sum(len(df) for df in whole["files"].values()) > 0 and len(whole["rejects"]) > 5
    for size in (1, 2, 3):  # batch edges inside every passage's QA set, and between them
        small = run(tmp_path, inputs, encoder, settings, batch_rows=size)
        for k in TYPES:
            pd.testing.assert_frame_equal(small["files"][k], whole["files"][k])
        pd.testing.assert_frame_equal(small["rejects"], whole["rejects"])
        assert small["metrics"] == whole["metrics"]


def test_a_low_yield_stops_before_any_output_is_written(tmp_path, encoder):
    tables, gens, settings = planted()
    inputs = write_inputs(tmp_path, tables, gens)
    strict = settings.params.model_copy(update={"min_yield": 0.9})
    outputs = {k: tmp_path / "out" / f"{k}.parquet" for k in TYPES}
    with pytest.raises(YieldError, match=r"verify\.min_yield"):
        verify_files(inputs, tmp_path / "generations.parquet", outputs, tmp_path / "out" / "rejects.parquet",
                     encoder, replace(settings, params=strict))  # fmt: skip
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_pairs_of_a_passage_apart_are_an_error_naming_the_row(tmp_path, encoder):
    tables, gens, settings = planted()
    cqa = tables["cqa"]
    first = cqa.index[cqa["context_id"] == cqa["context_id"].iloc[0]]
    moved = pd.concat([cqa.drop(first[-1:]), cqa.loc[first[-1:]]], ignore_index=True)  # last pair to the end
    inputs = write_inputs(tmp_path, {**tables, "cqa": moved}, gens)
    outputs = {k: tmp_path / f"out-{k}.parquet" for k in TYPES}
    with pytest.raises(CurllError, match="not adjacent") as err:
        verify_files(inputs, tmp_path / "generations.parquet", outputs, tmp_path / "rejects.parquet",
                     encoder, settings)  # fmt: skip
    assert err.value.row == len(moved) - 1 and err.value.file == str(inputs["cqa"])
    assert not any(p.exists() for p in outputs.values())


def test_a_repeated_instance_id_is_an_error_naming_the_row(tmp_path, encoder):
    tables, gens, settings = planted()
    ir = tables["ir"]
    inputs = write_inputs(tmp_path, tables, gens)
    pd.concat([ir, ir.iloc[[0]]], ignore_index=True).to_parquet(inputs["ir"], index=False)  # as a bug would
    outputs = {k: tmp_path / f"out-{k}.parquet" for k in TYPES}
    with pytest.raises(CurllError, match=r"instance_id \S+ appears more than once") as err:
        verify_files(inputs, tmp_path / "generations.parquet", outputs, tmp_path / "rejects.parquet",
                     encoder, settings)  # fmt: skip
    assert err.value.row == len(ir) and err.value.file == str(inputs["ir"])
