"""The merge's plan check: the shards hold exactly the requests the seeds table plans, each in
its seed's shard; a shard cut short, moved or made from other seeds is refused by name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from curll.artifacts import write_table
from curll.errors import CurllError
from curll.generate.merge import shard_paths
from curll.generate.plan import check_plan
from curll.generate.shard import generate_shard, shard_of, shard_path_name, sort_rows
from curll.schemas import GenerationSchema, SeedSchema
from tests.fakes import engine
from tests.generate.test_shard_merge import PAIRS, answer, seeds, tasks

N = 2


@pytest.fixture(scope="module")
def made() -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """Seeds and the shards generate makes of them (some passages rejected, so owed no QA)."""
    eng, _ = engine(answer)
    s = seeds(12)
    return s, [generate_shard(s, eng, tasks(), shard=i, n=N, pairs=PAIRS) for i in range(N)]


def write(where: Path, s: pd.DataFrame, parts: list[pd.DataFrame]) -> list[Path]:
    write_table(s, where / "seeds.parquet", SeedSchema)
    for i, df in enumerate(parts):
        write_table(sort_rows(df), where / shard_path_name(i, len(parts)), GenerationSchema)
    return shard_paths(where, len(parts))


def test_the_shards_generate_makes_follow_the_plan(tmp_path, made):
    s, parts = made
    ctx = pd.concat(parts)
    ctx = ctx[ctx["task"] == "context"]
    assert (ctx["status"] == "reject").any() and (ctx["status"] == "ok").any()  # both kinds checked
    check_plan(write(tmp_path, s, parts), tmp_path / "seeds.parquet")


def _drop(df: pd.DataFrame, task: str) -> pd.DataFrame:
    kept: pd.DataFrame = df.drop(df.index[df["task"] == task][0])
    return kept


def _twice(df: pd.DataFrame, task: str) -> pd.DataFrame:
    """One more request of ``task`` on a passage that already has one (its own key)."""
    return pd.concat([df, df[df["task"] == task].iloc[:1].assign(request_key="e" * 64)])


SWAP = {"context": "ir", "ir": "context"}
#: damage to (seeds, [shard 0, shard 1]) -> what the error says (shard 0 holds the IR seeds here)
Damage = Callable[[pd.DataFrame, list[pd.DataFrame]], tuple[pd.DataFrame, list[pd.DataFrame]]]
DAMAGE: dict[str, tuple[Damage, str]] = {
    "seeded-row-dropped": (lambda s, p: (s, [_drop(p[0], "ir"), p[1]]),
                           r"no shard holds the ir request for seed \w+: the shards were cut short"),
    "qa-row-dropped": (lambda s, p: (s, [p[0], _drop(p[1], "cqa")]),
                       r"no shard holds the cqa request for passage \w+: "),
    "seed-not-in-table": (lambda s, p: (s.iloc[1:], p),
                          r"a \w+ request names seed \w+, which is not in the seeds table \(\S+\)"),
    "seed-never-asked": (lambda s, p: (pd.concat([s, s.iloc[:1].assign(seed_id="f" * 16)]), p),
                         r"no shard holds the \w+ request for seed f{16}"),
    "types-swapped": (lambda s, p: (s.assign(type=s["type"].map(SWAP)), p),
                      r"no shard holds the \w+ request for seed \w+ \(12 in all\)"),
    "qa-twice": (lambda s, p: (s, [p[0], _twice(p[1], "csqa")]),
                 r"the shards hold more than one csqa request for passage \w+$"),
}  # fmt: skip


@pytest.mark.parametrize("case", DAMAGE)
def test_a_shard_that_departs_from_the_plan_is_refused_by_name(tmp_path, made, case):
    damage, said = DAMAGE[case]
    s, parts = damage(*made)
    with pytest.raises(CurllError, match=said):
        check_plan(write(tmp_path, s, parts), tmp_path / "seeds.parquet")


def test_a_row_in_the_wrong_shard_is_named_by_file_and_row(tmp_path, made):
    s, (first, second) = made
    moved = first.iloc[:1]
    seed = moved["seed_id"].iloc[0]
    assert shard_of(seed, N) == 0
    paths = write(tmp_path, s, [first.iloc[1:], pd.concat([second, moved])])
    with pytest.raises(CurllError) as err:
        check_plan(paths, tmp_path / "seeds.parquet")
    assert f"a row of seed {seed} is in shard 1 but that seed belongs to shard 0 of 2" in str(err.value)
    assert err.value.file == str(paths[1]) and err.value.field == "seed_id" and err.value.row is not None
