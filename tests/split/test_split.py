"""Split: ratings through the engine, seeded assignment, decontamination, chat records."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from curll.artifacts import validate
from curll.config import load_params
from curll.llm.tasks import Task
from curll.prompts import load_prompt
from curll.sampling import Sampling
from curll.schemas import RatingSchema, RecordSchema, UnitSchema
from curll.split.assign import assign
from curll.split.core import select
from curll.split.decontam import contaminated, ngrams
from curll.split.records import build_records
from curll.split.units import build_units, rate, rated_sample, rating_schema, records_made
from tests import instances as inst
from tests.fakes import engine
from tests.verify.conftest import PASSAGES

STORY = (
    "The red kite flew over the hill while the children ran after it laughing and shouting "
    "until the string slipped and the kite landed in the old oak tree near the pond"
)


def dataset(n_ctx: int = 6, n_ir: int = 6) -> dict[str, pd.DataFrame]:
    ctx = inst.contexts([(f"c{i}", 0, f"i{i % 2}", f"{PASSAGES[i % 5]} Part {i}.") for i in range(n_ctx)])
    ir = inst.ir([(f"r{i}", 0, f"i{i % 2}", f"Question {i}?", f"Answer number {i}.") for i in range(n_ir)])
    pairs = {f"c{i}": [(f"Q{i}a?", "A."), (f"Q{i}b?", "B.")] for i in range(n_ctx)}
    return {
        "context": ctx,
        "ir": ir,
        "cqa": inst.qa("cqa", ctx, pairs),
        "csqa": inst.qa("csqa", ctx, {k: v[:1] for k, v in pairs.items()}),
    }


def ratings_of(units: pd.DataFrame, rating: int = 3) -> pd.DataFrame:
    df = units[["unit_id", "type", "stage", "indicator_id"]].copy()
    df["rating"] = rating
    return df


def test_ngrams_and_contamination_by_overlap():
    assert ngrams("A b, c", 5) == {("a", "b", "c")}
    assert len(ngrams(STORY, 8)) == len(STORY.split()) - 7
    test = {"t1": STORY, "t2": PASSAGES[1]}
    train = {
        "copy": "Look! " + STORY.upper() + " The end.",  # nearly all its 8-grams are in t1
        "half": " ".join(STORY.split()[:14]) + " " + PASSAGES[3],  # a short quote of t1
        "clean": PASSAGES[4],
    }
    found = {c.train_id: c for c in contaminated(train, test, n=8, threshold=0.5)}
    assert set(found) == {"copy"} and found["copy"].test_id == "t1" and found["copy"].overlap > 0.8
    low = {c.train_id for c in contaminated(train, test, n=8, threshold=0.05)}
    assert low == {"copy", "half"}


def test_assignment_is_seeded_and_ranks_by_rating():
    units = build_units(dataset(n_ctx=8, n_ir=0))
    r = ratings_of(units)
    r.loc[r.index[:2], "rating"] = 5  # best two of the first indicator group... wherever they are
    a = assign(r, test=1, val=1, seed=1)
    b = assign(r.sample(frac=1, random_state=0), test=1, val=1, seed=1)
    pd.testing.assert_frame_equal(a, b)  # row order does not matter
    c = assign(r, test=1, val=1, seed=2)
    assert not a["split"].equals(c.set_index("unit_id").loc[a["unit_id"], "split"].reset_index(drop=True))
    for _, g in a.groupby("indicator_id"):
        assert g["split"].tolist()[:2] == ["test", "validation"] and set(g["split"].iloc[2:]) == {"train"}
        assert g["rating"].is_monotonic_decreasing and g["rank"].tolist() == list(range(1, len(g) + 1))
    top = a[a["rating"] == 5]
    assert (top["rank"] == 1).all() or len(set(top["indicator_id"])) == 1


def test_holdout_cap_leaves_small_groups_units_to_train():
    r = ratings_of(build_units(dataset(n_ctx=8, n_ir=0)))  # 4 passages per indicator
    for n, expected in ((1, ["train"]), (2, ["test", "train"]), (3, ["test", "train", "train"]),
                        (4, ["test", "validation", "train", "train"])):  # fmt: skip
        group = r[r["indicator_id"] == r["indicator_id"].iloc[0]].head(n)
        assert assign(group, test=1, val=1, seed=0, max_holdout=0.5)["split"].tolist() == expected
    assert assign(r, test=1, val=1, seed=0)["split"].value_counts()["validation"] == 2  # paper: no cap


def test_short_stages_get_more_test_units_best_rated_first_keeping_train():
    tables = dataset(n_ctx=8, n_ir=6)  # stage 0; i0 and i1 have 4 passages (2 CQA, 1 CSQA each) and 3 IR
    units = build_units(tables)
    qa = [
        (str(c), k, int(n))
        for k in ("cqa", "csqa")
        for c, n in tables[k]["context_id"].value_counts().items()
    ]
    made = records_made(units, qa)
    assert made[inst.hx("c0")] == {"cqa": 2, "csqa": 1} and made[inst.hx("r0")] == {"ir": 1}
    r = ratings_of(units)
    r.loc[r["unit_id"] == inst.hx("c7"), "rating"] = 5  # i1's test pick
    r.loc[r["unit_id"] == inst.hx("c5"), "rating"] = 4  # i1's best train passage
    p = load_params().split.model_copy(
        update={"test_per_indicator": 1, "val_per_indicator": 0, "max_holdout": 1.0}
    )
    base, _ = select(units, r, p)  # no counts given: nothing moves
    assert not base["topped_up"].any()
    assert base.groupby("type")["split"].apply(lambda s: (s == "test").sum()).to_dict() == {
        "context": 2,
        "ir": 2,
    }
    for need, passages, irs in ((3, 3, 3), (5, 5, 4), (99, 6, 4)):
        placed, _ = select(units, r, p.model_copy(update={"min_test_records": need}), records=made)
        validate(placed, UnitSchema, source="units")
        test = placed[placed["split"] == "test"]
        got = sum((made[u] for u in test["unit_id"]), Counter())
        assert (len(test[test["type"] == "context"]), len(test[test["type"] == "ir"])) == (passages, irs), (
            need
        )
        assert all(got[t] >= min(need, most) for t, most in (("cqa", 12), ("ir", 4)))
        assert set(test["unit_id"]) >= set(base.loc[base["split"] == "test", "unit_id"])  # the picks stay
        assert (
            test["topped_up"] == ~test["unit_id"].isin(base.loc[base["split"] == "test", "unit_id"])
        ).all()
        # every indicator keeps a train unit of each type
        train = placed[placed["split"] == "train"]
        assert len(train.groupby(["indicator_id", "type"])) == 4, need
    placed, _ = select(units, r, p.model_copy(update={"min_test_records": 5}), records=made)
    assert placed.set_index("unit_id").at[inst.hx("c5"), "topped_up"]  # best-rated first


def test_a_test_text_quoted_inside_a_longer_train_text_is_contamination():
    """The share is of the smaller text's n-grams: a test answer copied whole into a long train
    passage is under 0.5 of the passage's n-grams, but all of its own."""
    train = {"quotes": f"{PASSAGES[0]} {STORY} {PASSAGES[1]} {PASSAGES[2]}"}
    assert len(ngrams(train["quotes"], 8)) > 2 * len(ngrams(STORY, 8))
    [found] = contaminated(train, {"t1": STORY}, n=8, threshold=0.5)
    assert (found.train_id, found.test_id, found.overlap) == ("quotes", "t1", 1.0)


def test_validation_is_decontaminated_against_test_and_train_against_both():
    tables = dataset(n_ctx=0, n_ir=6)  # indicator i0: r0, r2, r4; i1: r1, r3, r5
    tables["ir"].loc[:, "response"] = [
        STORY, PASSAGES[3], STORY + " Again!", PASSAGES[4], PASSAGES[2], "Once more. " + PASSAGES[4]
    ]  # fmt: skip
    units = build_units(tables)
    rating = {"r0": 5, "r1": 5, "r2": 4, "r3": 4, "r4": 1, "r5": 1}  # test, validation, train per indicator
    r = ratings_of(units)
    r["rating"] = [rating[next(k for k in rating if inst.hx(k) == u)] for u in r["unit_id"]]
    one_each = {"test_per_indicator": 1, "val_per_indicator": 1, "max_holdout": 1.0}
    placed, rejects = select(units, r, load_params().split.model_copy(update=one_each))
    split = placed.set_index("unit_id")["split"]
    assert [split[inst.hx(k)] for k in ("r0", "r2", "r4", "r1", "r3", "r5")] == [
        "test", "validation", "train", "test", "validation", "train"
    ]  # fmt: skip
    detail = dict(zip(rejects["id"], rejects["detail"], strict=True))
    assert set(detail) == {inst.hx("r2"), inst.hx("r5")}  # a validation unit, then a train unit
    assert detail[inst.hx("r2")].endswith(f"with test {inst.hx('r0')}")
    assert detail[inst.hx("r5")].endswith(f"with validation {inst.hx('r3')}")
    assert set(placed.loc[placed["contaminated"], "unit_id"]) == set(detail)


def test_passage_and_its_questions_never_straddle_splits():
    tables = dataset()
    units = build_units(tables)
    paper = load_params().split.model_copy(update={"seed": 3, "max_holdout": 1.0, "test_per_indicator": 1})
    placed, _ = select(units, ratings_of(units), paper)
    validate(placed, UnitSchema, source="units")
    records = build_records(tables, placed, inst.indicators(["i0", "i1"]), system="Be kind.")
    validate(records, RecordSchema, source="records")
    split_of_unit = dict(zip(placed["unit_id"], placed["split"], strict=True))
    qa = records[records["type"].isin(["cqa", "csqa"])]
    assert len(qa) == 6 * 3
    assert (qa["split"] == qa["unit_id"].map(split_of_unit)).all()
    assert set(records["split"]) == {"train", "validation", "test"}
    msgs = json.loads(qa.iloc[0]["messages"])
    assert [m["role"] for m in msgs] == ["system", "user", "assistant"]
    ctx_text = tables["context"].set_index("instance_id").loc[qa.iloc[0]["unit_id"], "text"]
    assert msgs[1]["content"].startswith(ctx_text)


def test_planted_train_test_overlap_is_removed():
    tables = dataset(n_ctx=0, n_ir=4)
    tables["ir"].loc[:, "response"] = [STORY, PASSAGES[2], STORY + " Again!", PASSAGES[3]]  # r0, r2: group i0
    units = build_units(tables)
    r = ratings_of(units)
    r["rating"] = [5 if u == inst.hx("r0") else 1 for u in r["unit_id"]]  # r0 -> test in its group
    params = load_params().split
    placed, rejects = select(units, r, params.model_copy(update={"val_per_indicator": 0}))
    assert placed.set_index("unit_id").loc[inst.hx("r0"), "split"] == "test"
    assert rejects["id"].tolist() == [inst.hx("r2")] and rejects["reason"].tolist() == ["contaminated"]
    records = build_records(tables, placed[~placed["contaminated"]], inst.indicators(["i0", "i1"]), system="")
    assert inst.hx("r2") not in set(records["record_id"])
    assert json.loads(records.iloc[0]["messages"])[0]["role"] == "user"  # no system turn when empty


@pytest.mark.parametrize("answer", [{"rating": 4, "explanation": "Fine."}, "not json at all"])
def test_rating_goes_through_the_engine_and_a_bad_answer_is_a_zero(answer):
    tables = dataset(n_ctx=2, n_ir=1)
    units = build_units(tables)
    eng, backend = engine(lambda r: answer)
    schema = rating_schema(load_params().llm.profile.max_chars)
    task = Task(load_prompt("prompts/quality.j2"), schema, Sampling(max_tokens=64))
    ratings = rate(units, inst.indicators(["i0", "i1"]), eng, task)
    validate(ratings, RatingSchema, source="ratings")
    expected = 4 if isinstance(answer, dict) else 0
    assert ratings["rating"].tolist() == [expected] * 3
    assert (ratings["status"] == ("ok" if expected else "reject")).all()
    user = backend.asked[0].messages[-1].content
    assert "Indicator i" in user and "Comprehension questions" in "".join(
        m.messages[-1].content for m in backend.asked
    )


def test_only_a_seeded_sample_per_indicator_and_type_is_rated_the_rest_train():
    units = build_units(dataset(n_ctx=10, n_ir=10))  # 5 units per indicator (i0, i1) and type
    sample = rated_sample(units, 3, seed=1)
    assert sample.groupby(["indicator_id", "type"]).size().tolist() == [3, 3, 3, 3]
    shuffled = units.sample(frac=1, random_state=0)
    assert set(rated_sample(shuffled, 3, seed=1)["unit_id"]) == set(sample["unit_id"])  # not row order
    assert set(rated_sample(units, 3, seed=2)["unit_id"]) != set(sample["unit_id"])
    p = load_params().split.model_copy(update={"test_per_indicator": 1, "val_per_indicator": 1})
    placed, _ = select(units, ratings_of(sample, rating=2), p)
    by_id = placed.set_index("unit_id")
    unrated = by_id.loc[~by_id.index.isin(sample["unit_id"])]
    assert (unrated["rating"] == -1).all() and (unrated["split"] == "train").all()
    assert (unrated["rank"] > 3).all()  # after every rated unit of its group
    held = by_id[by_id["split"] != "train"]
    assert len(held) == 8 and held.index.isin(sample["unit_id"]).all()
    validate(placed.assign(contaminated=False), UnitSchema, source="units.parquet")


def test_fewer_rated_than_test_plus_validation_is_refused():
    with pytest.raises(ValueError, match="rate_per_indicator"):
        load_params().split.model_validate(
            {**load_params().split.model_dump(), "test_per_indicator": 2, "val_per_indicator": 2,
             "rate_per_indicator": 3}
        )  # fmt: skip
