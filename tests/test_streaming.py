"""curll.streaming's helpers on their own: runs kept whole across batches, uniqueness by column."""

from __future__ import annotations

import pandas as pd
import pytest

from curll.errors import CurllError
from curll.streaming import check_unique, whole_groups


def batches(keys: list[str], size: int) -> list[pd.DataFrame]:
    df = pd.DataFrame({"k": keys, "v": range(len(keys))})
    return [df.iloc[i : i + size] for i in range(0, len(df), size)]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100])
def test_whole_groups_never_splits_a_run_and_keeps_every_row_in_order(size):
    keys = list("aaabccccdde") + ["f"] * 9 + ["g"]
    out = list(whole_groups(batches(keys, size), "k"))
    assert pd.concat(out)["v"].tolist() == list(range(len(keys)))  # nothing lost, doubled or moved
    seen: set[str] = set()
    for df in out:
        runs = set(df["k"])
        assert not runs & seen, f"a run spans two batches at size {size}"
        seen |= runs
    assert all(not df.empty for df in out)


def test_check_unique_names_the_file_value_and_second_row(tmp_path):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"id": ["a", "b", "c", "b"]}).to_parquet(path, index=False)
    with pytest.raises(CurllError, match="id b appears more than once") as err:
        check_unique(path, "id")
    assert err.value.row == 3 and err.value.file == str(path) and err.value.field == "id"
    pd.DataFrame({"id": ["a", "b"]}).to_parquet(path, index=False)
    check_unique(path, "id")  # no error
