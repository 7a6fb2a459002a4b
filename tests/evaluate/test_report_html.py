"""The HTML page's tables: cells formatted by kind (counts as integers, means with two decimals,
an undefined value as an en dash, never "None" or "nan"), no empty rows."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from curll.evaluate.page import judge_scope, write_html
from curll.evaluate.report import build
from curll.evaluate.report_figures import NO_CLAIM
from tests.evaluate.test_analysis import losses_of, scores

JUDGES: dict[str, Any] = {
    "judges": {"j1": {"answers": 476, "mean_rating": 3.0, "parse_failure_rate": 0.0021, "parse_failures": 1}},
    "agreement": {},
    "controls": {"j1": {"informative": False, "means": {"empty": 3.0, "reference": 3.267}, "why": "no",
                        "reference_beats_mismatch": {"value": 0.5667, "lo": 0.4, "hi": 0.7333, "n": 30},
                        "reference_beats_empty": None}},
}  # fmt: skip


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    s = scores().assign(score=lambda f: f["score"] + f["item_id"].str[-1].astype(int) * 0.5)
    items = s[s["run"] == "continual/0"][["item_id", "stage"]].assign(reference="A cat sat on the mat.")
    degree = pd.Series(0, index=s["indicator_id"].unique())
    out = tmp_path_factory.mktemp("page")
    rep = build(s, items, degree, ["ir", "cqa"], out / "m", out / "p", losses=losses_of(s),
                samples=30, seed=1, judge_informative=False)  # fmt: skip
    write_html(rep, JUDGES, out / "report.html", "t")
    return Path(out / "report.html").read_text(encoding="utf-8")


def _rows(page: str) -> list[list[str]]:
    """Every table row's cell texts (header and data cells)."""
    cell = re.compile(r"<t[dh][^>]*>(.*?)</t[dh]>", re.S)
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cell.findall(row)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", page, re.S)]  # fmt: skip


def test_no_cell_shows_none_or_nan(page):
    cells = [c for row in _rows(page) for c in row]
    assert cells and not [c for c in cells if re.search(r"\b(none|nan)\b", c, re.I) and c != "none"]


def test_counts_render_as_integers(page):
    rows = _rows(page)
    assert not [c for row in rows for c in row if re.fullmatch(r"-?\d+\.0", c)]
    judge = next(r for r in rows if r and r[0] == "j1")
    assert "476" in judge and "1" in judge and "3.00" in judge  # answers, failures; a mean: two decimals


def test_no_table_row_is_empty_but_for_its_label(page):
    assert not [row for row in _rows(page) if len(row) > 1 and not any(row[1:])]


def test_means_and_sums_have_two_decimals_and_cells_their_n(page):
    rows = _rows(page)
    cells = [c for row in rows for c in row if "(n=" in c]
    assert cells and all("[" in c for c in cells)  # a bootstrap: every cell has its interval
    numbers = [x for c in cells for x in re.findall(r"-?\d+\.\d+", c)]
    assert numbers and all(len(x.split(".")[1]) == 2 for x in numbers)


def test_every_test_made_says_which_were_not_tested_and_which_held(page):
    """A curriculum test the gate kept from being made has no adjusted p and says "not tested",
    never a p-value beside a "no"; a baseline test says it is about one model alone."""
    table = re.search(r"<h3>Every test made</h3>.*?(<table>.*?</table>)", page, re.S)
    assert table is not None
    header, *listed = _rows(table.group(1))
    at = header.index("adjusted p")
    assert listed
    for row in listed:
        holds = row[at + 1]
        assert (row[at] == "\u2013") == (holds == "not tested"), row
        if row[0] == "baseline":
            assert holds.endswith("(this model alone)"), row
        else:
            assert holds in ("yes", "no", "not tested"), row
    assert {r[0] for r in listed} >= {"baseline", "loss"}


def test_a_test_the_gate_kept_from_being_made_is_listed_as_not_tested():
    from curll.evaluate.report_tables import claims_table

    def claim(family: str, p_holm: float | None, holds: bool) -> dict[str, Any]:
        return {"family": family, "key": f"{family}/k", "what": "w", "value": 0.5, "lo": 0.1, "hi": 0.9,
                "p": 0.003, "p_holm": p_holm, "holds": holds, "direction": "d"}  # fmt: skip

    listed = [claim("baseline", 0.2, False), claim("loss", None, False), claim("judge", 0.01, True)]
    header, *rows = _rows("".join(claims_table({"claims": {"list": listed}})))
    assert header[:3] == ["family", "key", "what"] and {r[2] for r in rows} == {"w"}  # what a key measures
    at = header.index("adjusted p")
    assert [(r[at], r[at + 1]) for r in rows] == [
        ("0.2", "no (this model alone)"),
        ("\u2013", "not tested"),
        ("0.01", "yes"),
    ]


def test_every_table_of_judge_scores_says_the_panel_failed_and_no_loss_table_does(page):
    said = re.findall(r"<h3>([^<]*)</h3>(<p>[^<]*</p>)?<table>", page)
    judged = [h for h, warn in said if "per skill" in h or "summed scores" in h]
    loss = [h for h, warn in said if "loss, nats" in h]
    assert judged and loss
    warned = {h for h, warn in said if NO_CLAIM in warn}
    assert set(judged) <= warned and not set(loss) & warned
    assert all("judge score (rating 1-5)" in h for h in judged if "per skill" in h)


def test_the_judge_section_says_whose_answers_were_judged(page):
    assert "<p>Judge scores: answers of the models of seed 42. " in page  # then its answers not judged


def test_judge_scope_names_the_seeds_left_out_and_the_answers_scored_without_a_judge():
    metrics = {"bootstrap": {"seeds": {"judge": [42], "loss": [42, 43, 44]}},
               "no_answer": {"total": 2, "answers": 480, "score": 1.0}}  # fmt: skip
    assert judge_scope(metrics) == (
        "Judge scores: answers of the models of seed 42 (evaluate.judge_seeds; the loss: the models of "
        "seeds 42, 43, 44). 2 of the 480 scores (an item and a model each) rest on no usable answer "
        "(blank or looping) and are 1, the lowest rating, given without a judge."
    )
    assert judge_scope({"bootstrap": {"seeds": {"judge": [1, 2], "loss": [1, 2]}}}) == (
        "Judge scores: answers of the models of seeds 1, 2."
    )


def test_a_panel_that_passed_its_controls_gets_no_warning(tmp_path):
    s = scores()
    items = s[s["run"] == "continual/0"][["item_id", "stage"]].assign(reference="A cat sat on the mat.")
    rep = build(s, items, pd.Series(0, index=s["indicator_id"].unique()), ["ir", "cqa"], tmp_path / "m",
                tmp_path / "p", samples=30, seed=1, judge_informative=True)  # fmt: skip
    write_html(rep, JUDGES, tmp_path / "report.html", "t")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "per skill (last stage)" in page and NO_CLAIM not in page
    assert not [c for c in rep.captions.values() if NO_CLAIM in c]
