"""split_files on parquet tables: bad inputs are one-line errors, and the stats file is written
with the tables or not at all."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from curll.config import load_params
from curll.errors import CurllError
from curll.instances import TYPES
from curll.llm.tasks import Task
from curll.prompts import load_prompt
from curll.sampling import Sampling
from curll.schemas import instance_schema
from curll.split.files import split_files
from curll.split.units import rate as units_rate
from curll.split.units import rating_schema
from curll.yields import YieldError
from tests import instances as inst
from tests.fakes import engine
from tests.split.test_split import dataset

NAMES = ["i0", "i1"]


def setup(tmp_path: Path, tables: dict[str, pd.DataFrame]):
    tmp_path.mkdir(parents=True, exist_ok=True)
    paths = {k: (tmp_path / f"{k}.parquet", instance_schema(k)) for k in TYPES}
    for k, (path, _) in paths.items():
        tables[k].to_parquet(path, index=False)
    out = {n: str(tmp_path / "out" / f"{n}.parquet") for n in ("ratings", "units", "records", "rejects")}
    out["stats"] = str(tmp_path / "out" / "stats.json")
    base = load_params().split
    p = base.model_copy(
        update={"out": base.out.model_copy(update=out), "max_holdout": 1.0, "min_test_records": 0}
    )
    return paths, p


def rate(units: pd.DataFrame) -> pd.DataFrame:
    """Every unit rated 4 through a fake engine (the rating path of the stage)."""
    eng, _ = engine(lambda r: {"rating": 4, "explanation": "Fine."})
    task = Task(
        load_prompt("prompts/quality.j2"), rating_schema(load_params().llm.profile.max_chars), Sampling()
    )
    return units_rate(units, inst.indicators(NAMES), eng, task)


def test_tables_and_stats_are_written_together(tmp_path):
    paths, p = setup(tmp_path, dataset())
    stats = split_files(paths, inst.indicators(NAMES), p, rate)
    assert json.loads(Path(p.out.stats).read_text()) == json.loads(json.dumps(stats))
    assert stats["records"] and Path(p.out.records).exists()


def test_an_indicator_the_taxonomy_lacks_is_named_by_file_and_row(tmp_path):
    tables = dataset()
    tables["ir"].loc[3, "indicator_id"] = inst.hx("elsewhere")
    paths, p = setup(tmp_path, tables)
    with pytest.raises(CurllError) as err:
        split_files(paths, inst.indicators(NAMES), p, rate)
    assert (Path(str(err.value.file)).name, err.value.row, err.value.field) == (
        "ir.parquet",
        3,
        "indicator_id",
    )
    assert not Path(p.out.stats).exists()


def test_a_unit_in_two_tables_names_both(tmp_path):
    tables = dataset()
    tables["ir"].loc[0, "instance_id"] = str(tables["context"]["instance_id"].iloc[0])
    paths, p = setup(tmp_path, tables)
    with pytest.raises(CurllError, match=r"appears twice \(in .*context\.parquet and .*ir\.parquet\)"):
        split_files(paths, inst.indicators(NAMES), p, rate)


def test_empty_tables_stop_with_the_empty_splits_and_write_nothing(tmp_path):
    paths, p = setup(tmp_path, {k: df.iloc[:0] for k, df in dataset().items()})
    with pytest.raises(YieldError, match="stage 0 train: 0 records"):
        split_files(paths, inst.indicators(NAMES), p, rate)
    assert not Path(p.out.stats).exists() and not Path(p.out.records).exists()
