"""``split.source: import``: split's four tables from release folders in the authors' Hub layout
(:mod:`harness.hub_files`), sampled per stage, type and split with a seed."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from curll.artifacts import validate
from curll.chat import question_of, turns_of
from curll.config import load_params
from curll.config.verify import SplitParams
from curll.errors import CurllError
from curll.imports import import_release
from curll.schemas import RatingSchema, RecordSchema, RejectSchema, UnitSchema
from curll.split.imported import PASSAGE_REQUEST, imported_files
from curll.yields import YieldError
from harness.hub_files import rows, write_repo


def release(root: Path, stages: tuple[int, ...] = (0, 1), n: int = 12) -> Path:
    """Every typed repository kind of each of ``stages``: train, val and test where the card has them."""
    for s in stages:
        write_repo(root, f"stage{s}_cqa", "cqa", {"train": rows("cqa", s, n, tag=f"c{s}")})
        write_repo(root, f"stage{s}_csqa", "csqa", {"train": rows("csqa", s, n // 2, tag=f"s{s}")})
        write_repo(root, f"stage{s}_instruct", "instruct", {"train": rows("instruct", s, n, tag=f"i{s}")})
        for kind in ("cqa_eval", "csqa_eval", "instruct_eval"):
            splits = {"val": rows(kind, s, 6, tag=f"v{kind}{s}"), "test": rows(kind, s, 8, tag=f"t{kind}{s}")}
            write_repo(root, f"stage{s}_{kind}", kind, splits)
    return root


def params(tmp: Path, releases: Path, **caps: int) -> SplitParams:
    p = load_params().split
    out = p.out.model_copy(update={**{k: str(tmp / "split" / f"{k}.parquet")
                                      for k in ("ratings", "units", "records", "rejects")},
                                   "stats": str(tmp / "split" / "stats.json")})  # fmt: skip
    imported = p.imported.model_copy(update={"dir": str(releases), **caps})
    return p.model_copy(update={"source": "import", "imported": imported, "out": out})


Stats = dict[str, Any]


def run(p: SplitParams, stages: tuple[int, ...] = (0,), types: tuple[str, ...] = (), **kw: int) -> Stats:
    """The split stage's import, requiring train records of ``stages`` and test records of ``types``."""
    return imported_files(p, stages=stages, types=types, **kw)


def counts(records: pd.DataFrame) -> Counter[tuple[int, str, str]]:
    return Counter(zip(records["stage"], records["type"], records["split"], strict=True))


def test_each_stage_type_and_split_keeps_at_most_its_cap(tmp_path: Path):
    p = params(tmp_path, release(tmp_path / "releases"), train=5, validation=2, test=3)
    stats = run(p, stages=(0, 1), types=("ir", "cqa", "csqa"))
    every = validate(pd.read_parquet(p.out.records), RecordSchema, source="records")
    records = every[every["type"] != "context"]
    want = {"train": 5, "validation": 2, "test": 3}
    # every (stage, type, split): cqa 12 train, csqa 6 rows x 2 pairs, ir 12; eval 6 val, 8 test
    types = ("cqa", "csqa", "ir")
    assert counts(records) == {(s, t, k): n for s in (0, 1) for t in types for k, n in want.items()}
    passages = every[every["type"] == "context"]
    asked = records[records["type"].isin(["cqa", "csqa"])]
    assert sorted(passages["unit_id"]) == sorted(set(asked["unit_id"]))  # one passage record a unit
    assert stats["records"] == {f"{k}/{t}": 2 * n for k, n in want.items() for t in ("cqa", "csqa", "ir")} | {
        f"{k}/context": n for k, n in Counter(passages["split"]).items()
    }
    have = {"train": 12, "validation": 6, "test": 8}  # csqa train: 6 rows of 2 pairs
    assert stats["in_release"] == {f"{s}/{t}/{k}": n for s in (0, 1) for t in ("cqa", "csqa", "ir")
                                   for k, n in have.items()}  # fmt: skip
    assert list(every["stage"]) == sorted(every["stage"])  # split's own order
    units = validate(pd.read_parquet(p.out.units), UnitSchema, source="units")
    assert set(units["unit_id"]) == set(every["unit_id"])
    assert set(units["type"]) == {"context", "ir"} and (units["rating"] == -1).all()
    for path, schema in ((p.out.ratings, RatingSchema), (p.out.rejects, RejectSchema)):
        assert validate(pd.read_parquet(path), schema, source=str(path)).empty


def test_the_sample_is_seeded(tmp_path: Path):
    releases = release(tmp_path / "releases", stages=(0,))
    ids = {}
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        p = params(tmp_path / name, releases, train=4, validation=1, test=1)
        run(p.model_copy(update={"seed": seed}))
        ids[name] = set(pd.read_parquet(p.out.records)["record_id"])
    assert ids["a"] == ids["b"] and ids["a"] != ids["c"]


def test_each_drawn_record_is_the_full_imports_record_of_that_id(tmp_path: Path):
    """The draw maps a position to (file, row, pair) without reading the text: every kept record,
    csqa pairs and files of several row groups included, is what the whole import makes of it."""
    root = tmp_path / "releases"
    csqa = rows("csqa", 0, 40, pairs=3)
    write_repo(root, "stage0_csqa", "csqa", {"train": csqa}, files=3, row_group_rows=3)
    evals = {"test": rows("instruct_eval", 0, 30)}
    write_repo(root, "stage0_instruct_eval", "instruct_eval", evals, files=2, row_group_rows=4)
    p = params(tmp_path, root, train=25, validation=1, test=9)
    run(p, types=("ir",), batch_rows=4)
    every = pd.read_parquet(p.out.records)
    sample = every[every["type"] != "context"].set_index("record_id")
    whole = import_release([(f, None) for f in sorted(root.iterdir())], tmp_path / "whole",
                           system=p.system_prompt)  # fmt: skip
    assert whole["records"] == 40 * 3 + 30
    full = pd.read_parquet(tmp_path / "whole" / "records.parquet").set_index("record_id")
    assert len(sample) == 25 + 9 and set(sample.index) <= set(full.index)
    pd.testing.assert_frame_equal(sample, full.loc[sample.index])
    # each passage record holds the passage its unit's questions are asked on, in their split
    for r in every[every["type"] == "context"].to_dict("records"):
        _, user, passage = turns_of(str(r["messages"]))
        questions = sample[sample["unit_id"] == r["unit_id"]]
        assert user == PASSAGE_REQUEST and set(questions["split"]) == {r["split"]} and len(questions)
        for m in questions["messages"]:
            asked = turns_of(m)[1]
            assert asked.startswith(passage + "\n\n") and question_of("csqa", asked, passage) != asked


def test_an_empty_question_drawn_is_replaced_from_the_draws_spare(tmp_path: Path):
    root = tmp_path / "releases"
    train = rows("cqa", 0, 60)
    for r in train[::12]:  # 5 empty: no more than the draw's 5 spare
        r["question"] = " "
    write_repo(root, "stage0_cqa", "cqa", {"train": train})
    write_repo(root, "stage0_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 0, 4)})
    p = params(tmp_path, root, train=20, validation=1, test=2)
    stats = run(p)
    records = pd.read_parquet(p.out.records)
    asked = records[records["type"] == "cqa"]
    assert (asked["split"] == "train").sum() == 20  # 25 drawn
    questions = [turns_of(m)[1].rsplit("Question:", 1)[1].strip() for m in asked["messages"]]
    assert all(questions)  # no empty question kept
    assert 0 < stats["drawn_left_out"]["empty question"] <= 5 and len(stats["drawn_left_out"]) == 1


def test_imported_records_stay_in_the_release_split(tmp_path: Path):
    p = params(tmp_path, release(tmp_path / "releases", stages=(2,)), train=100, validation=100, test=100)
    run(p, stages=(2,))
    records = pd.read_parquet(p.out.records)
    texts = records["messages"].str.extract(r"Question (\w+?)\d")[0]
    assert set(records.loc[texts.str.startswith("c", na=False), "split"]) == {"train"}
    assert set(records.loc[texts.str.startswith("t", na=False), "split"]) == {"test"}
    assert set(records.loc[texts.str.startswith("v", na=False), "split"]) == {"validation"}


@pytest.mark.parametrize(
    ("stages", "types", "named"),
    [
        ((0, 1), (), "no stage 1 train records"),
        ((0,), ("ir", "csqa"), "no stage 0 csqa test records (stage0_csqa_eval)"),
    ],
)
def test_a_trained_stage_or_evaluated_type_the_import_lacks_is_refused_and_nothing_written(
    tmp_path: Path, stages: tuple[int, ...], types: tuple[str, ...], named: str
):
    root = tmp_path / "releases"
    write_repo(root, "stage0_instruct", "instruct", {"train": rows("instruct", 0, 4)})
    write_repo(root, "stage0_instruct_eval", "instruct_eval", {"test": rows("instruct_eval", 0, 4)})
    write_repo(root, "stage1_instruct_eval", "instruct_eval", {"test": rows("instruct_eval", 1, 4)})
    p = params(tmp_path, root, train=5, validation=1, test=1)
    with pytest.raises(YieldError, match=re.escape(named)):
        run(p, stages=stages, types=types)
    assert not (tmp_path / "split").exists() or not any((tmp_path / "split").glob("*.parquet"))


def test_a_train_repositorys_val_and_test_files_and_an_eval_repositorys_train_file_are_set_aside(
    tmp_path: Path,
):
    """Test and validation come from the _eval repositories alone, train from the others:
    stage<N>_instruct's own val and test files (which the card lists), and a train file in an
    _eval repository, are counted, never drawn."""
    root = tmp_path / "releases"
    write_repo(root, "stage0_instruct", "instruct", {"train": rows("instruct", 0, 6, tag="a"),
                                                     "val": rows("instruct", 0, 5, tag="b"),
                                                     "test": rows("instruct", 0, 7, tag="c")})  # fmt: skip
    write_repo(
        root,
        "stage0_instruct_eval",
        "instruct_eval",
        {"test": rows("instruct_eval", 0, 4, tag="e"), "train": rows("instruct_eval", 0, 3, tag="d")},
    )
    p = params(tmp_path, root, train=100, validation=100, test=100)
    stats = run(p, types=("ir",))
    records = pd.read_parquet(p.out.records)
    assert counts(records) == {(0, "ir", "train"): 6, (0, "ir", "test"): 4}
    assert not records["messages"].str.contains("thing [bcd]", regex=True).any()
    assert stats["set_aside"] == {"stage0_instruct/data/val-00000-of-00001.parquet": 5,
                                  "stage0_instruct/data/test-00000-of-00001.parquet": 7,
                                  "stage0_instruct_eval/data/train-00000-of-00001.parquet": 3}  # fmt: skip


@pytest.mark.parametrize("name", ["my_cqa", "my_train"])  # my_train: not stage<N>_train, refused as such
def test_a_folder_not_named_as_its_repository_is_refused_by_name(tmp_path: Path, name: str):
    root = release(tmp_path / "releases", stages=(0,))
    (root / "stage0_cqa").rename(root / name)
    with pytest.raises(CurllError, match=rf"{name}.*rename it"):
        run(params(tmp_path, root, train=5, validation=1, test=1))


@pytest.mark.parametrize("make", ["missing", "empty"])
def test_no_release_folder_is_an_error_naming_the_key(tmp_path: Path, make: str):
    root = tmp_path / "releases"
    if make == "empty":
        root.mkdir()
        (root / "README.md").write_text("downloads go here\n")
    with pytest.raises(CurllError, match=r"split\.imported\.dir"):
        run(params(tmp_path, root, train=5, validation=1, test=1))


def test_rows_of_one_id_on_different_passages_are_different_units(tmp_path: Path):
    """A unit is one passage: an eval ``id`` whose rows hold other passages gives each its own
    unit and passage record, so every item is asked on its own passage."""
    root = tmp_path / "releases"
    write_repo(root, "stage0_cqa", "cqa", {"train": rows("cqa", 0, 4)})
    evals = rows("cqa_eval", 0, 4)
    for i, r in enumerate(evals):
        r["id"], r["context"] = "one", f"Passage number {i}."
    write_repo(root, "stage0_cqa_eval", "cqa_eval", {"test": evals})
    p = params(tmp_path, root, train=4, validation=1, test=4)
    run(p, types=("cqa",))
    records = pd.read_parquet(p.out.records)
    test = records[records["split"] == "test"]
    passages = {
        r["unit_id"]: turns_of(r["messages"])[2] for r in test[test["type"] == "context"].to_dict("records")
    }
    asked = test[test["type"] == "cqa"]
    assert len(passages) == 4 and asked["unit_id"].nunique() == 4
    for unit, messages in zip(asked["unit_id"], asked["messages"], strict=True):
        assert turns_of(messages)[1].startswith(passages[unit] + "\n\n")


def _long(text: str) -> str:
    """A passage of 12 words no other passage has (decontamination compares 8-grams)."""
    name = re.sub(r"\W", "", text)
    return " ".join(f"{name}w{j}" for j in range(12)) + "."


def test_a_train_question_on_a_test_units_text_is_dropped_and_replaced(tmp_path: Path):
    """Train and eval repositories are separate files, not separate texts: a train question asked
    on a kept test passage (or an IR pair equal to a test pair) is decontaminated as split's own
    records are, and the draw's spare takes its place."""
    root = tmp_path / "releases"
    tests = rows("cqa_eval", 0, 6, tag="t")  # 3 passages, 2 questions each
    for r in tests:
        r["context"] = _long(r["context"])
    train = rows("cqa", 0, 30, tag="c")
    for i, r in enumerate(train):
        r["context"] = tests[2 * (i % 3)]["context"] if i < 4 else _long(r["context"])
    write_repo(root, "stage0_cqa", "cqa", {"train": train})
    write_repo(root, "stage0_cqa_eval", "cqa_eval", {"test": tests})
    ir_tests = rows("instruct_eval", 0, 2, tag="e")
    ir_train = rows("instruct", 0, 3, tag="i")
    for r in ir_tests:  # one eval id: one unit of two pairs, the second copied into train
        r.update(question=_long(r["question"]), response=_long(r["response"]))
    ir_train[1].update(instruction=ir_tests[1]["question"], response=ir_tests[1]["response"])
    write_repo(root, "stage0_instruct", "instruct", {"train": ir_train})
    write_repo(root, "stage0_instruct_eval", "instruct_eval", {"test": ir_tests})
    p = params(tmp_path, root, train=26, validation=1, test=6)  # cqa draws all 30 (26 + 5 spare)
    stats = run(p, types=("cqa", "ir"))
    records = pd.read_parquet(p.out.records)
    passages = {
        r["unit_id"]: turns_of(r["messages"])[2]
        for r in records[records["type"] == "context"].to_dict("records")
    }
    test_texts = {passages[u] for u in records.loc[records["split"] == "test", "unit_id"] if u in passages}
    train_cqa = records[(records["type"] == "cqa") & (records["split"] == "train")]
    assert len(test_texts) == 3 and len(train_cqa) == 26  # 30 drawn, 4 on test passages dropped
    assert not {passages[u] for u in train_cqa["unit_id"]} & test_texts
    train_ir = records[(records["type"] == "ir") & (records["split"] == "train")]
    assert (
        len(train_ir) == 2
        and not train_ir["messages"].str.contains(ir_tests[1]["question"], regex=False).any()
    )
    rejects = validate(pd.read_parquet(p.out.rejects), RejectSchema, source="rejects")
    assert sorted(rejects["type"]) == ["context"] * 3 + ["ir"]  # rows 0 and 3: one passage, one unit
    assert set(rejects["reason"]) == {"contaminated"}
    test_units = set(records.loc[records["split"] == "test", "unit_id"])
    details = [re.fullmatch(r"overlap (\S+) with test (\w+)", d) for d in rejects["detail"]]
    assert all(m and float(m[1]) >= p.decontamination.threshold and m[2] in test_units for m in details)
    units = validate(pd.read_parquet(p.out.units), UnitSchema, source="units")
    assert set(units.loc[units["contaminated"], "unit_id"]) == set(rejects["id"])
    assert not set(rejects["id"]) & set(records["unit_id"]) and stats["contaminated"] == 4
