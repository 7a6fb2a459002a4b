"""One judge a DVC stage, then the panel: the joined tables and stats are what one stage
rating with every judge wrote before (judge order kept), and a judge without its folder is an
error that names the file."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from curll.artifacts import empty_table, write_table, write_tables
from curll.config import Params, parse_params
from curll.errors import CurllError
from curll.evaluate.controls import control_agreement, control_sample, judge_controls
from curll.evaluate.items import build_items
from curll.evaluate.judge import (
    controls_table,
    judge,
    judge_tables,
    panel_stats,
    rate_controls,
    rating_yields,
)
from curll.schemas.evaluate import ControlRatingSchema, ItemSchema, JudgeRatingSchema, RubricSchema
from curll.yamlio import load_yaml
from curll.yields import public
from pipeline import evaluate_panel
from tests import instances as inst
from tests.evaluate.test_items import records
from tests.evaluate.test_judge import answers, number, repeated, tasks
from tests.fakes import engine

ROOT = Path(__file__).resolve().parents[2]
JUDGES = ["smollm2-torch", "embedded"]  # llm.profiles names, not in their sorted order


@pytest.fixture
def items() -> pd.DataFrame:
    return build_items(records(), inst.indicators(["i0", "i1"]), ("cqa", "csqa"), max_per_type=0, seed=1)


def params(tmp_path: Path) -> Params:
    data = load_yaml(ROOT / "params.yaml")
    data["evaluate"]["judges"] = JUDGES
    out = data["evaluate"]["out"]
    for key in ("panel", "items", "ratings", "rubric", "judges"):
        out[key] = str(tmp_path / Path(out[key]).name)
    return parse_params(data, source="params.yaml")


def rater(offset: int):
    def rate(req):  # the first judge rates by the answer's number, the second breaks on some
        if "ANS-" not in req.messages[-1].content:  # a control item: a reference, empty or shuffled
            return {"rating": 3 + offset, "explanation": "control"}
        n = number(req)
        return "no json" if offset and n % 3 == 0 else {"rating": 1 + (n + offset) % 5, "explanation": "ok"}

    return rate


def test_the_panel_joins_the_judges_as_one_stage_rating_with_all_of_them_did(tmp_path, items):
    p = params(tmp_path)
    ans = answers(items)
    panel = {name: (engine(rater(k), attempts=1)[0], tasks()) for k, name in enumerate(JUDGES)}
    for name in JUDGES:  # what each evaluate_judge@<name> stage writes
        ratings, rubric = judge_tables(p.evaluate.out.panel, name)
        one = judge(ans, items, {name: panel[name]}, explain=True)
        ctl = rate_controls(control_sample(items, 4, 42), items, {name: panel[name]}, explain=True)
        write_tables([(one, ratings, JudgeRatingSchema), (empty_table(RubricSchema), rubric, RubricSchema),
                      (ctl, controls_table(p.evaluate.out.panel, name), ControlRatingSchema)])  # fmt: skip
    write_table(items, p.evaluate.out.items, ItemSchema)
    evaluate_panel.run(p)
    together = judge(ans, items, panel, explain=True)  # the single stage of before
    got = pd.read_parquet(p.evaluate.out.ratings)
    pd.testing.assert_frame_equal(got, JudgeRatingSchema.validate(together), check_dtype=False)
    assert list(dict.fromkeys(got["judge"])) == JUDGES
    stats = json.loads(Path(p.evaluate.out.judges).read_text())
    controls = pd.concat(
        [pd.read_parquet(controls_table(p.evaluate.out.panel, n)) for n in JUDGES], ignore_index=True
    )
    verdicts = judge_controls(
        controls, max(2000, p.evaluate.bootstrap.samples), p.evaluate.bootstrap.seed, judges=JUDGES
    )
    expected = {**panel_stats(together), "yields": public(rating_yields(together, items)),
                "controls": verdicts, "controls_agreement": control_agreement(controls),
                "informative": {n: verdicts[n]["informative"] for n in JUDGES},
                "panel_informative": any(verdicts[n]["informative"] for n in JUDGES)}  # fmt: skip
    assert stats == json.loads(json.dumps(expected))
    assert stats["judges"]["embedded"]["parse_failures"] > 0  # the second judge's failures counted
    assert "embedded|smollm2-torch" in stats["agreement"]


def test_a_judge_without_its_folder_is_an_error_naming_it(tmp_path, items):
    p = params(tmp_path)
    write_table(items, p.evaluate.out.items, ItemSchema)
    with pytest.raises(CurllError, match=r"smollm2-torch/ratings\.parquet"):
        evaluate_panel.run(p)
    assert not Path(p.evaluate.out.ratings).exists()


def test_a_judge_stage_for_a_name_not_on_the_panel_is_an_error(tmp_path):
    from pipeline import evaluate_judge

    with pytest.raises(CurllError, match=r"'nope' is not one of evaluate\.judges"):
        evaluate_judge.run(params(tmp_path), "nope")


def test_ratings_of_items_no_longer_sampled_are_an_error_naming_the_judge_file(tmp_path, items):
    p = params(tmp_path)
    ans = answers(items)
    for k, name in enumerate(JUDGES):
        ratings, rubric = judge_tables(p.evaluate.out.panel, name)
        one = judge(ans, items, {name: (engine(rater(k), attempts=1)[0], tasks())}, explain=True)
        write_tables([(one, ratings, JudgeRatingSchema), (empty_table(RubricSchema), rubric, RubricSchema)])
    write_table(items.iloc[1:], p.evaluate.out.items, ItemSchema)  # the items changed since
    with pytest.raises(CurllError, match=r"rated items are not in evaluate\.out\.items") as err:
        evaluate_panel.run(p)
    assert "smollm2-torch/ratings.parquet" in str(err.value)


def test_the_panel_keeps_every_repeat_and_the_judges_agree_on_each_answer(tmp_path, items):
    """``evaluate.repeats`` 2: each judge's table holds both answers of an (item, run); the panel
    joins them and counts agreement over every (item, run, repeat) both judges rated."""
    p = params(tmp_path)
    ans = repeated(items, 2)
    panel = {name: (engine(rater(k), attempts=1)[0], tasks(seed=5)) for k, name in enumerate(JUDGES)}
    for name in JUDGES:
        ratings, rubric = judge_tables(p.evaluate.out.panel, name)
        one = judge(ans, items, {name: panel[name]}, explain=True)
        ctl = rate_controls(control_sample(items, 4, 42), items, {name: panel[name]}, explain=True)
        write_tables([(one, ratings, JudgeRatingSchema), (empty_table(RubricSchema), rubric, RubricSchema),
                      (ctl, controls_table(p.evaluate.out.panel, name), ControlRatingSchema)])  # fmt: skip
    write_table(items, p.evaluate.out.items, ItemSchema)
    evaluate_panel.run(p)
    got = pd.read_parquet(p.evaluate.out.ratings)
    together = JudgeRatingSchema.validate(judge(ans, items, panel, explain=True))
    pd.testing.assert_frame_equal(got, together, check_dtype=False)
    assert len(got) == len(JUDGES) * len(ans) and set(got["repeat"]) == {0, 1}
    both = got.pivot_table(index=["item_id", "run", "repeat"], columns="judge", values="rating").dropna()
    stats = json.loads(Path(p.evaluate.out.judges).read_text())
    assert stats["agreement"]["embedded|smollm2-torch"]["n"] == len(both)
    assert set(both.index.get_level_values("repeat")) == {0, 1}  # not the first repeat alone
    assert stats["judges"]["smollm2-torch"]["answers"] == len(ans)


def test_a_judge_stage_refuses_answers_of_other_repeats_than_evaluate_repeats(tmp_path, items):
    from curll.schemas.evaluate import AnswerSchema
    from pipeline import evaluate_judge

    data = load_yaml(ROOT / "params.yaml")
    data["evaluate"].update(judges=JUDGES, repeats=2)
    for key in ("items", "answers"):
        data["evaluate"]["out"][key] = str(tmp_path / f"{key}.parquet")
    p = parse_params(data, source="params.yaml")
    one = answers(items).assign(repeat=0, order="continual", seed=42, trained_to=0, truncated=False,
                                request_key="0" * 64, model="m", backend="transformers", sampling="{}",
                                prompt_version="0" * 16, prompt_hash="0" * 16, raw="", reason="",
                                attempts=1)  # fmt: skip
    write_table(items, p.evaluate.out.items, ItemSchema)
    write_table(one, p.evaluate.out.answers, AnswerSchema)  # evaluate_infer with repeats 1
    with pytest.raises(CurllError, match=r"answers are of repeats \[0\], evaluate\.repeats is 2"):
        evaluate_judge.run(p, "smollm2-torch")
