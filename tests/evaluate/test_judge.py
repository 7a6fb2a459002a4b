"""The judge panel: malformed judge output is counted, not fatal; agreement between judges."""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd
import pytest

from curll.config.llm import MaxChars
from curll.evaluate.items import build_items
from curll.evaluate.judge import item_scores, judge, judge_schema, panel_stats
from curll.llm.tasks import Task
from curll.prompts import load_prompt
from curll.sampling import Sampling
from curll.schemas.evaluate import JudgeRatingSchema, ScoreSchema
from tests import instances as inst
from tests.evaluate.test_items import records
from tests.fakes import engine


@pytest.fixture(scope="module")
def items() -> pd.DataFrame:
    return build_items(
        records(), inst.indicators(["i0", "i1"]), ("ir", "cqa", "csqa"), max_per_type=0, seed=1
    )


def answers(items: pd.DataFrame) -> pd.DataFrame:
    runs = ["continual/0", "continual/0-1"]
    return pd.DataFrame([{"item_id": i, "run": r, "answer": f"ANS-{n}", "status": "ok"} for r in runs
                         for n, i in enumerate(items["item_id"])])  # fmt: skip


def tasks(explain: bool = True, seed: int | None = None) -> dict[str, Task]:
    schema = judge_schema(MaxChars(long=400, short=100), explain=explain)
    sampling = Sampling(seed=seed)
    return {t: Task(load_prompt(f"prompts/judge_{t}.j2"), schema, sampling) for t in ("ir", "cqa", "csqa")}


def repeated(items: pd.DataFrame, k: int) -> pd.DataFrame:
    """:func:`answers` ``k`` times, repeat r's texts ``ANS-<n> r<r>`` (repeat 0's: as one answer's)."""
    one = answers(items)
    return pd.concat([one.assign(repeat=r, answer=one["answer"] + (f" r{r}" if r else "")) for r in range(k)],
                     ignore_index=True)  # fmt: skip


def number(req) -> int:
    found = re.search(r"ANS-(\d+)", req.messages[-1].content)
    assert found is not None
    return int(found.group(1))


def test_a_malformed_judge_answer_is_a_counted_failure(items):
    def strict(req):  # rates by the answer's number
        n = number(req)
        return {"rating": 1 + n % 5, "explanation": "fine"}

    def sloppy(req):  # breaks on every other request
        n = number(req)
        return "not json at all" if n % 2 else {"rating": 1 + n % 5, "explanation": "ok"}

    panel = {"a": (engine(strict)[0], tasks()), "b": (engine(sloppy, attempts=1)[0], tasks())}
    ratings = judge(answers(items), items, panel, explain=True)
    JudgeRatingSchema.validate(ratings)
    assert len(ratings) == 2 * 2 * len(items)
    b = ratings[ratings["judge"] == "b"]
    assert b["rating"].isna().sum() == 2 * (items.reset_index().index % 2 == 1).sum()
    assert (b[b["rating"].isna()]["status"] == "reject").all()
    stats = panel_stats(ratings)
    assert stats["judges"]["a"]["parse_failure_rate"] == 0.0
    assert stats["judges"]["b"]["parse_failures"] == int(b["rating"].isna().sum())
    pair = stats["agreement"]["a|b"]  # where both parsed they gave the same rating
    assert pair["n"] == int(b["rating"].notna().sum()) and pair["exact"] == 1.0
    assert pair["kappa_quadratic"] == pytest.approx(1.0) and pair["spearman"] == pytest.approx(1.0)
    scores = item_scores(ratings)
    assert scores["judged"].isin([1, 2]).all() and scores["score"].notna().all()


def test_agreement_values_on_hand_made_ratings():
    rows = []
    for i, (x, y) in enumerate([(1, 2), (2, 1), (3, 3), (4, 5), (5, 4)]):
        rows += [{"item_id": f"{i:016x}", "run": "m", "judge": "x", "rating": float(x)},
                 {"item_id": f"{i:016x}", "run": "m", "judge": "y", "rating": float(y)}]  # fmt: skip
    pair = panel_stats(pd.DataFrame(rows))["agreement"]["x|y"]
    assert pair["exact"] == 0.2 and pair["spearman"] == pytest.approx(0.8)
    # quadratic kappa = 1 - observed / expected squared distance: 4 / 5 = 0.8 per item observed;
    # independent uniform ratings on 1-5 are 2 x variance 2 = 4 apart on average: 1 - 0.8 / 4 = 0.8
    assert pair["kappa_quadratic"] == pytest.approx(0.8)


def test_the_judge_sees_the_passage_question_reference_and_answer(items):
    eng, backend = engine(lambda req: {"rating": 3, "explanation": "ok"})
    judge(answers(items).head(len(items)), items, {"a": (eng, tasks())}, explain=True)
    asked = [r.messages[-1].content for r in backend.asked]
    cqa = next(text for text in asked if "Where did the cat sit?" in text)
    assert "The cat sat by the door." in cqa and "By the door." in cqa and "ANS-" in cqa
    assert json.loads(backend.asked[0].schema_json or "{}")["required"] == ["rating", "explanation"]


def test_rubric_scores_five_criteria_and_keeps_failures(items):
    from curll.evaluate.analysis import rubric_by_stage
    from curll.evaluate.judge import CRITERIA, rubric, rubric_schema
    from curll.schemas.evaluate import RubricSchema

    def rate(req):
        n = number(req)
        return (
            "{broken"
            if n == 0
            else {**{c: 1 + (n + k) % 5 for k, c in enumerate(CRITERIA)}, "explanation": "ok"}
        )

    task = Task(
        load_prompt("prompts/judge_rubric.j2"), rubric_schema(MaxChars(long=400, short=100)), Sampling()
    )
    ans = answers(items)
    table = rubric(ans, items, {"a": (engine(rate, attempts=1)[0], task)})
    RubricSchema.validate(table)
    first = table[ans["answer"] == "ANS-0"]
    assert first[list(CRITERIA)].isna().all().all() and (first["status"] == "reject").all()
    ok = table[ans["answer"] == "ANS-1"].iloc[0]
    assert [ok[c] for c in CRITERIA] == [2.0, 3.0, 4.0, 5.0, 1.0]
    runs = ans.assign(order="continual", trained_to=ans["run"].str[-1].astype(int))
    summary = rubric_by_stage(table, runs, items)
    assert set(summary.index.get_level_values("order")) == {"continual"} and list(summary.columns) == list(
        CRITERIA
    )


def test_no_answer_scores_lowest_unjudged_and_a_backend_error_is_a_missing_score(items):
    """A blank or looping answer used to be left out of the cell mean (so giving up scored higher);
    it now counts as the rubric's lowest rating, without asking a judge. A backend error is not
    the model's answer: missing, and counted."""
    from curll.evaluate.analysis import scores_table
    from curll.evaluate.judge import NO_ANSWER_SCORE, unanswered

    ans = answers(items).assign(reason="")
    ans.loc[0, ["answer", "status", "reason"]] = ["", "reject", "empty output"]
    ans.loc[1, ["answer", "status", "reason"]] = ["", "reject", "degenerate: the answer fell into a loop"]
    ans.loc[2, ["answer", "status", "reason"]] = ["", "reject", "backend error: out of memory"]
    seen: list[str] = []

    def rater(req):
        seen.append(req.messages[-1].content)
        return {"rating": 4}

    ratings = judge(ans, items, {"a": (engine(rater)[0], tasks(explain=False))}, explain=False)
    assert len(ratings) == len(ans) - 3 and seen and all("ANS-" in s for s in seen)  # no judge asked
    assert unanswered(ans) == {ans.loc[2, "run"]: 1}
    ans["order"], ans["seed"], ans["trained_to"], ans["truncated"] = "continual", 42, 0, False
    table = scores_table(ans, items, item_scores(ratings)).set_index(["item_id", "run"])
    key = [tuple(ans.loc[k, ["item_id", "run"]]) for k in range(3)]
    assert table.loc[key[0], "score"] == table.loc[key[1], "score"] == NO_ANSWER_SCORE == 1.0
    assert table.loc[key[0], "no_answer"] and table.loc[key[1], "no_answer"] and table["no_answer"].sum() == 2
    assert pd.isna(table.loc[key[2], "score"]) and table.loc[key[2], "judged"] == 0
    assert (table.drop(index=key)["score"] == 4).all()


def test_without_explain_the_judge_is_asked_for_the_rating_alone(items):
    """The reason costs more tokens than the rating and no metric reads it: off by default."""
    asked: list[str] = []

    def rater(req):
        asked.append(req.messages[-1].content)
        return {"rating": 3}

    ratings = judge(answers(items), items, {"a": (engine(rater)[0], tasks(explain=False))}, explain=False)
    assert ratings["rating"].eq(3).all() and ratings["explanation"].eq("").all()
    assert asked and not any("say why" in a for a in asked)
    assert judge_schema(MaxChars(long=400, short=100), explain=False)["required"] == ["rating"]
    with_reason: list[str] = []

    def explainer(req):
        with_reason.append(req.messages[-1].content)
        return {"rating": 3}  # no reason: breaks the schema that asks for one

    failed = judge(answers(items), items, {"a": (engine(explainer, attempts=1)[0], tasks())}, explain=True)
    assert all("say why" in a for a in with_reason) and failed["rating"].isna().all()


def test_controls_are_asked_as_answers_with_the_same_text_are(items):
    """A control is rated through :func:`judge` (same prompt, schema, sampling): its request is
    the one an answer with its text would make, and the empty one is asked, not scored 1."""
    from curll.evaluate.controls import control_sample
    from curll.evaluate.judge import rate_controls
    from curll.schemas.evaluate import ControlRatingSchema

    sample = control_sample(items, per_type=1, seed=3)
    eng = engine(lambda req: {"rating": 2, "explanation": "ok"})[0]
    controls = ControlRatingSchema.validate(rate_controls(sample, items, {"a": (eng, tasks())}, explain=True))
    assert len(controls) == len(sample) and controls["rating"].eq(2).all()
    same = sample.assign(run=sample["control"], status="ok")[["item_id", "run", "answer", "status"]]
    as_answers = judge(same, items, {"a": (eng, tasks())}, explain=True)
    got = controls.set_index(["item_id", "control"])["prompt_hash"].sort_index()
    expected = as_answers.set_index(["item_id", "run"])["prompt_hash"].sort_index()
    assert list(got) == list(expected) and list(got.index) == list(expected.index)
    assert (controls[controls["control"] == "empty"]["status"] == "ok").all()


def test_every_repeat_is_rated_with_its_seed_and_an_item_scores_the_mean_of_its_repeats(items):
    """``evaluate.repeats``: every judge rates each answer of an (item, model), repeat r with its
    seed + r (repeat 0: the requests of one answer, so cached); the score of the (item, model)
    is the mean of its answers' scores, one row per (item, model)."""
    from curll.evaluate.analysis import scores_table

    def rater(req: Any) -> dict[str, Any]:  # judge noise: the rating moves with the judge's seed
        return {"rating": 1 + (number(req) + req.sampling.seed) % 5, "explanation": "ok"}

    two = repeated(items, 2)
    eng_a, asked_a = engine(rater)
    eng_b = engine(lambda req: {**rater(req), "rating": 3})[0]
    panel = {"a": (eng_a, tasks(seed=7)), "b": (eng_b, tasks(seed=7))}
    ratings = JudgeRatingSchema.validate(judge(two, items, panel, explain=True))
    assert len(ratings) == 2 * len(two) and ratings.groupby(["item_id", "run", "repeat"]).size().eq(2).all()
    seeds = {(r.messages[-1].content.count(" r1"), r.sampling.seed) for r in asked_a.asked}
    assert seeds == {(0, 7), (1, 8)}  # repeat 0 at the judge's seed, repeat 1 at seed + 1

    eng_one, asked_one = engine(rater)
    single = judge(answers(items), items, {"a": (eng_one, tasks(seed=7))}, explain=True)
    first = ratings[(ratings["repeat"] == 0) & (ratings["judge"] == "a")].reset_index(drop=True)
    pd.testing.assert_frame_equal(first, single)  # repeat 0 is the answer of before, request keys too
    assert [r for r in asked_a.asked if r.sampling.seed == 7] == asked_one.asked

    per_answer = item_scores(ratings)
    assert len(per_answer) == len(two) and per_answer["judged"].eq(2).all()
    meta = two.assign(order="continual", seed=42, trained_to=0, truncated=False, reason="")
    table = ScoreSchema.validate(scores_table(meta, items, per_answer))
    assert len(table) == len(answers(items)) and not table.duplicated(["item_id", "run"]).any()
    assert table["repeats"].eq(2).all() and table["judged"].eq(4).all() and not table["no_answer"].any()
    expected = per_answer.groupby(["item_id", "run"])["score"].mean()
    got = table.set_index(["item_id", "run"])["score"]
    assert got.to_dict() == pytest.approx(expected.reindex(got.index).to_dict())
    assert table["answer"].str.fullmatch(r"ANS-\d+").all()  # repeat 0's answer
    noisy = per_answer.pivot_table(index=["item_id", "run"], columns="repeat", values="score")
    assert (noisy[0] != noisy[1]).any()  # the repeats' judge noise is in the mean


def test_a_repeat_without_an_answer_scores_lowest_and_a_backend_error_is_left_out(items):
    from curll.evaluate.analysis import scores_table
    from curll.evaluate.judge import NO_ANSWER_SCORE

    two = repeated(items, 2).assign(reason="", order="continual", seed=42, trained_to=0, truncated=False)
    n = len(answers(items))
    empty, looped, error = ["", "reject", "empty output"], ["", "reject", "degenerate: a loop"], [
        "", "reject", "backend error: out of memory"]  # fmt: skip
    cols = ["answer", "status", "reason"]
    two.loc[0, cols] = empty  # item 0: repeat 0 gave nothing, repeat 1 rated 4
    two.loc[1, cols], two.loc[n + 1, cols] = empty, looped  # item 1: no repeat answered
    two.loc[2, cols] = error  # item 2: repeat 0 a backend error (no score), repeat 1 rated 4
    two.loc[3, cols], two.loc[n + 3, cols] = error, error  # item 3: no score at all
    four = engine(lambda req: {"rating": 4})[0]
    ratings = judge(two, items, {"a": (four, tasks(explain=False))}, explain=False)
    assert len(ratings) == len(two) - 6
    table = scores_table(two, items, item_scores(ratings)).set_index(["item_id", "run"])
    key = [tuple(two.loc[k, ["item_id", "run"]]) for k in range(5)]
    assert table.loc[key[0], "score"] == (NO_ANSWER_SCORE + 4) / 2 and not table.loc[key[0], "no_answer"]
    assert table.loc[key[1], "score"] == NO_ANSWER_SCORE and table.loc[key[1], "no_answer"]
    assert table.loc[key[2], "score"] == 4 and table.loc[key[2], "judged"] == 1
    assert pd.isna(table.loc[key[3], "score"]) and table.loc[key[3], "judged"] == 0
    assert table.loc[key[4], "score"] == 4 and table["no_answer"].sum() == 1 and table["repeats"].eq(2).all()


def test_the_rubric_rates_every_repeat_and_its_summary_is_theirs_pooled(items):
    from curll.evaluate.analysis import rubric_by_stage
    from curll.evaluate.judge import CRITERIA, rubric, rubric_schema
    from curll.schemas.evaluate import RubricSchema

    def rate(req):
        return {**dict.fromkeys(CRITERIA, 1 + req.sampling.seed % 2 * 2), "explanation": "ok"}  # 1, then 3

    task = Task(load_prompt("prompts/judge_rubric.j2"), rubric_schema(MaxChars(long=400, short=100)),
                Sampling(seed=4))  # fmt: skip
    two = repeated(items, 2)
    table = RubricSchema.validate(rubric(two, items, {"a": (engine(rate)[0], task)}))
    assert len(table) == len(two) and set(table.groupby("repeat")["vocabulary"].first()) == {1.0, 3.0}
    runs = two.assign(order="continual", trained_to=two["run"].str[-1].astype(int))
    summary = rubric_by_stage(table, runs, items)
    assert summary["vocabulary"].eq(2.0).all()  # the mean of repeat 0 (1) and repeat 1 (3)
