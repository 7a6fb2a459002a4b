"""The split stage on disk (curll.split.workspace) gives what the in-memory functions give:
the same unit texts, the same contamination, the same records in the same order."""

from __future__ import annotations

import pandas as pd

from curll.config import load_params
from curll.split.core import record_counts, require_records, select
from curll.split.records import build_records, indicator_info, record_frame
from curll.split.units import build_units, unit_index
from curll.split.workspace import Workspace
from tests import instances as inst
from tests.split.test_split import STORY, dataset, ratings_of


def chunks(df: pd.DataFrame, size: int = 3) -> list[pd.DataFrame]:
    return [df.iloc[i : i + size] for i in range(0, len(df), size)]


def loaded(tables: dict[str, pd.DataFrame]) -> Workspace:
    ws = Workspace()
    ws.add("context", chunks(tables["context"]))
    ws.add("ir", chunks(tables["ir"]))
    for kind in ("cqa", "csqa"):
        ws.add(kind, chunks(tables[kind].iloc[::-1]))  # any order: pairs come back by q_index
    return ws


def test_unit_texts_contamination_and_records_equal_the_in_memory_ones():
    tables = dataset(n_ctx=8, n_ir=6)
    tables["ir"].loc[:, "response"] = [STORY, "Fine.", STORY + " Again!", "Ok.", "Yes.", "No."]
    units = build_units(tables)
    ws = loaded(tables)
    try:
        index = unit_index(tables)
        pd.testing.assert_frame_equal(index, units.drop(columns="content"))
        assert [ws.content(u, t) for u, t in zip(units["unit_id"], units["type"], strict=True)] == units[
            "content"
        ].tolist()
        ratings = ratings_of(units)
        ratings["rating"] = [5 if u == inst.hx("r0") else 2 for u in ratings["unit_id"]]
        p = load_params().split.model_copy(
            update={"test_per_indicator": 1, "val_per_indicator": 0, "max_holdout": 1.0}
        )
        placed, rejects = select(units, ratings, p)
        streamed, streamed_rejects = select(index, ratings, p, content=ws.content)
        pd.testing.assert_frame_equal(streamed, placed)
        pd.testing.assert_frame_equal(streamed_rejects, rejects)
        assert len(rejects) >= 1  # the planted copy of the test unit
        kept = placed[~placed["contaminated"]]
        indicators = inst.indicators(["i0", "i1"])
        expected = build_records(tables, kept, indicators, system="Be kind.")
        split_of = dict(zip(kept["unit_id"], kept["split"], strict=True))
        for kind in ("context", "ir", "cqa", "csqa"):
            for chunk in chunks(tables[kind]):
                ws.add_records(record_frame(kind, chunk, split_of, indicator_info(indicators), ws.passage,
                                            system="Be kind."))  # fmt: skip
        got = pd.concat(list(ws.sorted_records(chunk_rows=5)), ignore_index=True)
        pd.testing.assert_frame_equal(got, expected)
        require_records(record_counts(got), [0], p)
    finally:
        ws.close()
