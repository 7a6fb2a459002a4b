"""Control items: a judge that rates at random is uninformative, one that prefers the reference is
informative; the win arithmetic by hand; the sample is seeded, bounded and never mismatches an
item with its own reference; the judge stage writes controls.parquet and the panel reads it."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from curll.artifacts import write_table
from curll.config import Params, parse_params
from curll.errors import CurllError
from curll.evaluate.controls import beats, control_agreement, control_sample, judge_controls, sign_test, wins
from curll.evaluate.items import build_items
from curll.evaluate.judge import controls_table, rate_controls
from curll.schemas.evaluate import CONTROLS, AnswerSchema, ControlRatingSchema, ItemSchema
from curll.yamlio import load_yaml
from curll.yields import YieldError
from tests import instances as inst
from tests.evaluate.test_items import records
from tests.evaluate.test_judge import tasks
from tests.fakes import engine

ROOT = Path(__file__).resolve().parents[2]
SHOWN = re.compile(r"Answer key: (.*)\n\nChild's answer: ?(.*?)(?:\n|$)")


@pytest.fixture(scope="module")
def base() -> pd.DataFrame:
    return build_items(
        records(), inst.indicators(["i0", "i1"]), ("ir", "cqa", "csqa"), max_per_type=0, seed=1
    )


def many(base: pd.DataFrame, stages: int = 5, copies: int = 2) -> pd.DataFrame:
    """``base`` (2 items a type, stage 0) copied to ``stages`` stages, ``copies`` times each:
    new ids and references, so every stratum holds 2 x copies items."""
    frames = []
    for stage in range(stages):
        for c in range(copies):
            k = stage * copies + c
            frames.append(base.assign(stage=stage, item_id=[f"{k:08x}{n:08x}" for n in range(len(base))],
                                      reference=base["reference"] + f" Part {k} of the key."))  # fmt: skip
    return ItemSchema.validate(pd.concat(frames, ignore_index=True))


def shown(req) -> tuple[str, str]:
    found = SHOWN.search(req.messages[-1].content)
    assert found is not None
    return found.group(1), found.group(2)


def prefers_reference(req) -> dict[str, int]:
    key, answer = shown(req)
    if answer == key:
        return {"rating": 5}
    return {"rating": 1 if not answer else 3 if sorted(answer.split()) == sorted(key.split()) else 2}


def at_random(req) -> dict[str, int]:
    return {"rating": random.Random(f"7:{req.messages[-1].content}").randint(1, 5)}


def test_control_sample_is_seeded_bounded_and_never_mismatches_with_the_own_reference(base):
    items = many(base)
    items.loc[0, "dropped"] = "prompt_too_long"  # not asked: never a control
    sample = control_sample(items, per_type=3, seed=5)
    assert sample.equals(control_sample(items.sample(frac=1, random_state=0), per_type=3, seed=5))
    assert not sample.equals(control_sample(items, per_type=3, seed=6))
    assert items.loc[0, "item_id"] not in set(sample["item_id"])
    per = sample[sample["control"] == "reference"].groupby(["stage", "type"]).size()
    assert (per == 3).all() and len(per) == 5 * 3
    ref = dict(zip(items["item_id"], items["reference"], strict=True))
    wide = sample.set_index(["item_id", "control"])["answer"].unstack()
    assert list(wide.columns.sort_values()) == ["empty", "mismatch", "reference", "shuffled"]
    assert (wide["reference"] == wide.index.map(ref)).all() and (wide["empty"] == "").all()
    assert (wide["mismatch"] != wide["reference"]).all() and wide["mismatch"].isin(items["reference"]).all()
    assert (wide["shuffled"] != wide["reference"]).all()
    assert (wide["shuffled"].str.split().map(sorted) == wide["reference"].str.split().map(sorted)).all()
    assert len(control_sample(items, per_type=100, seed=5)) <= 4 * (len(items) - 1)  # all items at most


def test_a_one_item_stratum_mismatches_with_an_item_of_another_stage(base):
    items = many(base, stages=2, copies=1)
    alone = items[(items["stage"] == 1) & (items["type"] == "ir")].iloc[:1]
    items = pd.concat([items[~((items["stage"] == 1) & (items["type"] == "ir"))], alone], ignore_index=True)
    sample = control_sample(items, per_type=4, seed=1).set_index(["item_id", "control"])["answer"]
    partner = sample[(alone["item_id"].iloc[0], "mismatch")]
    assert partner in set(items[(items["stage"] == 0) & (items["type"] == "ir")]["reference"])


def test_win_and_tie_arithmetic_by_hand():
    ratings = {"a": (5, 1, 1, 5), "b": (3, 3, 4, 3), "c": (2, 4, 2, 1), "d": (4, None, 5, 4)}
    rows = [{"judge": "j", "item_id": i, "control": c, "rating": np.nan if r is None else float(r)}
            for i, rs in ratings.items() for c, r in zip(CONTROLS, rs, strict=True)]  # fmt: skip
    controls = pd.DataFrame(rows)
    # mismatch: a 5>1 win, b 3=3 tie, c 2<4 loss, d left out (mismatch unparsed): (1 + 0.5 + 0) / 3
    assert list(wins(controls, "mismatch")) == [1.0, 0.5, 0.0]
    got = judge_controls(controls, samples=2000, seed=3)["j"]
    assert got["reference_beats_mismatch"]["value"] == pytest.approx(0.5, abs=1e-4)
    assert got["reference_beats_mismatch"]["n"] == 3
    # empty: a 5>1, b 3<4, c 2=2, d 4<5 -> 1.5 / 4; shuffled: a tie, b tie, c win, d tie -> 2.5 / 4
    assert (
        got["reference_beats_empty"]["value"] == 0.375 and got["reference_beats_shuffled"]["value"] == 0.625
    )
    assert got["means"] == {"reference": 3.5, "mismatch": 2.667, "empty": 3.0, "shuffled": 3.25}
    assert got["n_items"] == 4 and got["parse_failures"] == 1 and not got["informative"]
    w = np.array([1.0, 0.5, 0.0])  # the interval: percentiles of the means of (2000, 3) drawn items
    idx = np.random.default_rng(3).integers(0, 3, size=(2000, 3))
    lo, hi = np.percentile(w[idx].mean(axis=1), [2.5, 97.5])
    assert (got["reference_beats_mismatch"]["lo"], got["reference_beats_mismatch"]["hi"]) == (
        round(lo, 4), round(hi, 4))  # fmt: skip
    assert beats(np.array([1.0]), 2000, 0) == {"value": 1.0, "lo": None, "hi": None, "n": 1}


def test_a_random_judge_is_uninformative_and_one_preferring_the_reference_is(base):
    items = many(base)
    sample = control_sample(items, per_type=4, seed=42)
    panel = {"random": (engine(at_random)[0], tasks(explain=False)),
             "fair": (engine(prefers_reference)[0], tasks(explain=False))}  # fmt: skip
    rated = ControlRatingSchema.validate(rate_controls(sample, items, panel, explain=False))
    assert len(rated) == 2 * len(sample) and rated["rating"].notna().all()
    got = judge_controls(rated, samples=2000, seed=42)
    assert list(got) == ["random", "fair"]
    assert not got["random"]["informative"] and "not shown to prefer" in got["random"]["why"]
    assert (
        got["random"]["reference_beats_mismatch"]["lo"]
        < 0.5
        < got["random"]["reference_beats_mismatch"]["hi"]
    )
    assert got["fair"]["informative"] and got["fair"]["reference_beats_mismatch"]["value"] == 1.0
    assert got["fair"]["means"] == {"reference": 5.0, "mismatch": 2.0, "empty": 1.0, "shuffled": 3.0}
    assert got["fair"]["n_items"] == 60 and got["fair"]["reference_beats_mismatch"]["n"] == 60
    pair = control_agreement(rated)["fair|random"]
    assert pair["n"] == len(sample) and 0 < pair["exact"] < 0.5
    assert judge_controls(rated.iloc[:0], 2000, 1, judges=["x"])["x"]["informative"] is False


def stage_params(tmp_path: Path, min_yield: float = 0.5) -> Params:
    """params.yaml with one judge, every test type and its tables under ``tmp_path``."""
    data = load_yaml(ROOT / "params.yaml")
    data["evaluate"].update(judges=["smollm2-torch"], types=["ir", "cqa", "csqa"], min_yield=min_yield)
    out = data["evaluate"]["out"]
    for key in ("panel", "items", "answers", "ratings", "rubric", "judges"):
        out[key] = str(tmp_path / Path(out[key]).name)
    return parse_params(data, source="params.yaml")


def stage_inputs(tmp_path: Path, base: pd.DataFrame, runs: int = 2) -> Params:
    p = stage_params(tmp_path)
    write_table(base, p.evaluate.out.items, ItemSchema)
    prov = {"request_key": "0" * 64, "model": "m", "backend": "transformers", "sampling": "{}",
            "prompt_version": "0" * 16, "prompt_hash": "0" * 16, "raw": "", "status": "ok", "reason": "",
            "attempts": 1}  # fmt: skip
    answers = [{"item_id": i, "run": f"seed-42/continual/{r}", "repeat": 0, "order": "continual", "seed": 42,
                "trained_to": 0, "answer": f"ANS-{n}", "truncated": False, **prov}
               for r in range(runs) for n, i in enumerate(base["item_id"])]  # fmt: skip
    write_table(pd.DataFrame(answers), p.evaluate.out.answers, AnswerSchema)
    return p


def test_the_judge_stage_writes_controls_and_the_panel_tells_if_the_judge_is_informative(
    tmp_path, base, monkeypatch
):
    from pipeline import evaluate_judge, evaluate_panel

    p = stage_inputs(tmp_path, base)
    seen: list[str] = []

    def rate(req):
        answer = shown(req)[1]
        seen.append(answer)
        return {"rating": 3} if answer.startswith("ANS-") else prefers_reference(req)

    monkeypatch.setattr(evaluate_judge, "engine_from_params", lambda *a, **k: engine(rate)[0])
    evaluate_judge.run(p, "smollm2-torch")
    path = controls_table(p.evaluate.out.panel, "smollm2-torch")
    table = ControlRatingSchema.validate(pd.read_parquet(path))
    one_word = int((base["reference"].str.split().str.len() == 1).sum())  # no shuffled control
    assert (
        len(table) == 4 * len(base) - one_word and "" in seen
    )  # every item (2 a stratum), the empty one rated
    evaluate_panel.run(p)
    stats = json.loads(Path(p.evaluate.out.judges).read_text())
    verdict = stats["controls"]["smollm2-torch"]
    assert verdict["reference_beats_mismatch"] == {"value": 1.0, "lo": 1.0, "hi": 1.0, "n": len(base)}
    assert stats["informative"] == {"smollm2-torch": False} and stats["panel_informative"] is False
    assert "fewer than 10" in verdict["why"]  # always right, but on 6 items: too few to tell
    assert stats["controls_agreement"] == {}
    path.unlink()  # a folder from before the controls: one line naming the file
    with pytest.raises(CurllError, match=r"smollm2-torch/controls\.parquet: no control ratings") as err:
        evaluate_panel.run(p)
    assert "\n" not in str(err.value)


def test_controls_alone_never_fail_the_stage_unless_the_judge_parses_too_little_overall(
    tmp_path, base, monkeypatch
):
    from pipeline import evaluate_judge

    p = stage_inputs(
        tmp_path, base, runs=3
    )  # 18 answers that parse, 21 controls that do not (3 one-word references: no shuffle)
    answers_only = engine(lambda req: {"rating": 4} if "ANS-" in shown(req)[1] else "no json", attempts=1)[0]
    monkeypatch.setattr(evaluate_judge, "engine_from_params", lambda *a, **k: answers_only)
    evaluate_judge.run(stage_params(tmp_path, min_yield=0.4), "smollm2-torch")  # 18 of 39 parse: 46%
    table = pd.read_parquet(controls_table(p.evaluate.out.panel, "smollm2-torch"))
    assert table["rating"].isna().all() and (table["status"] == "reject").all()
    with pytest.raises(YieldError, match=r"stage all smollm2-torch: 18 of 39 kept"):
        evaluate_judge.run(stage_params(tmp_path, min_yield=0.5), "smollm2-torch")


def test_the_sign_test_by_hand_and_few_items_are_never_informative():
    """9 wins, 1 loss, 2 ties: P(Binomial(10, 1/2) >= 9) = (10 + 1) / 1024."""
    w = np.array([1.0] * 9 + [0.0] + [0.5] * 2)
    assert sign_test(w) == pytest.approx(11 / 1024)
    assert sign_test(np.array([0.5, 0.5])) == 1.0
    rng = np.random.default_rng(0)  # a judge that rates at random over 5 items: never informative
    for _ in range(50):
        rows = [{"item_id": f"i{k}", "control": c, "rating": float(rng.integers(1, 6)), "judge": "j"}
                for k in range(5) for c in ("reference", "mismatch")]  # fmt: skip
        assert not judge_controls(pd.DataFrame(rows), 200, 1)["j"]["informative"]


def test_a_failed_judge_that_rates_empty_answers_above_the_reference_is_told_so():
    """The mismatch test fails (alternate wins and losses), and every empty answer is rated 5
    against the reference's 3: the line names that control, the shuffled one (a tie) is not named."""
    ratings = {"reference": 3, "empty": 5, "shuffled": 3}
    rows = [{"judge": "j", "item_id": f"i{i}", "control": c, "rating": float(r)}
            for i in range(30) for c, r in {**ratings, "mismatch": 2 + 2 * (i % 2)}.items()]  # fmt: skip
    got = judge_controls(pd.DataFrame(rows), samples=500, seed=1)["j"]
    assert not got["informative"]
    said = "; rated an empty answer above the reference: 0.00 [0.00, 0.00], sign test p 9.31e-10"
    said += ", Holm-adjusted 9.31e-10"  # a family of one: the shuffled control ties, no test made
    assert got["why"].endswith(said), got["why"]  # P(Binomial(30, 1/2) >= 30) = 2**-30
    assert "shuffled" not in got["why"]


def test_a_control_is_named_only_when_its_reverse_sign_test_holds_after_holm():
    """Empty answers (and shuffled ones) of 5 items, every one rated above the reference: the
    percentile interval is [0, 0], but P(Binomial(5, 1/2) >= 5) = 1/32 each, 1/16 after Holm
    over the two; alone (the shuffled ones tie: no test made) it holds; with 12 items both hold."""

    def why(n: int, shuffled: int) -> str:
        ratings = {"reference": 3, "empty": 5, "shuffled": shuffled}
        rows = [{"judge": "j", "item_id": f"i{i}", "control": c, "rating": float(r)}
                for i in range(max(n, 10)) for c, r in {**ratings, "mismatch": 2 + 2 * (i % 2)}.items()
                if c in ("reference", "mismatch") or i < n]  # fmt: skip
        return str(judge_controls(pd.DataFrame(rows), samples=200, seed=1)["j"]["why"])

    assert "rated" not in why(5, shuffled=5)  # 1/32 each: Holm 2 x 1/32 = 0.0625
    assert "rated an empty answer" in why(5, shuffled=3)  # the shuffled control ties: p 1, Holm 0.031
    both = why(12, shuffled=5)  # 2**-12 each: Holm 2 x 2**-12 for the first, then the same for the second
    assert (
        "rated an empty answer" in both
        and "a shuffled reference" in both
        and "Holm-adjusted 0.000488" in both
    )


def test_without_bootstrap_replicates_a_judge_of_enough_items_is_judged_by_its_sign_test_alone():
    """samples 0: no interval, but 12 items all won against the mismatch are a test that holds;
    the line gives the share alone, never "fewer than 10 items" beside ``informative: true``."""
    ratings = {"reference": 5, "mismatch": 2, "empty": 1, "shuffled": 3}
    rows = [{"judge": "j", "item_id": f"i{i}", "control": c, "rating": float(r)}
            for i in range(12) for c, r in ratings.items()]  # fmt: skip
    got = judge_controls(pd.DataFrame(rows), samples=0, seed=1)["j"]
    assert got["informative"] and got["reference_beats_mismatch"]["lo"] is None
    assert (
        got["why"]
        == "prefers the reference to another item's answer: 1.00 over 12 items, sign test p 0.000244"
    )
