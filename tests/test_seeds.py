"""Seeds: deterministic, counted as params say, stable for untouched indicators."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from curll.config import load_params
from curll.schemas import SeedSchema
from curll.seeds import make_seeds

ROOT = Path(__file__).resolve().parents[1]


def indicators(n: int = 4) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "indicator_id": [f"{i:016x}" for i in range(1, n + 1)],
            "stage": [i % 2 for i in range(n)],
            "age_group": ["0-5"] * n,
            "skill": ["s"] * n,
            "subskill": ["u"] * n,
            "goal": ["g"] * n,
            "indicator": [f"ind {i}" for i in range(n)],
        }
    )


WORDS = pd.DataFrame(
    {
        "word": ["cat", "run", "red", "big", "sun"],
        "pos": ["Noun", "Verb", "Adjective", "Adjective", "Noun"],
        "stage": [0, 0, 0, 1, 1],
    }
)


def templates(ind: pd.DataFrame) -> pd.DataFrame:
    rows = [
        {"indicator_id": i, "kind": k, "template": f"{k} format {j}"}
        for i in ind["indicator_id"]
        for k in ("context", "instruction")
        for j in range(3)
    ]
    return pd.DataFrame(rows)


@pytest.fixture
def p():
    seeds = load_params(ROOT / "params.yaml").seeds  # 4 of each: the test vocabulary has few words
    return seeds.model_copy(update={"per_indicator": {"context": 4, "ir": 4}})


def test_sample_mode_counts_and_validity(p):
    ind = indicators()
    seeds, stats = make_seeds(ind, WORDS, templates(ind), p)
    SeedSchema.validate(seeds)
    per = p.per_indicator["context"] + p.per_indicator["ir"]  # 4 indicators x seeds per indicator
    assert len(seeds) == 4 * per and stats["seeds"] == 4 * per
    # words come from the indicator's stage, templates from the matching kind
    stage_words = {s: set(WORDS.loc[WORDS["stage"] == s, "word"]) for s in (0, 1)}
    assert all(w in stage_words[s] for w, s in zip(seeds["word"], seeds["stage"], strict=True))
    assert seeds.loc[seeds["type"] == "ir", "template"].str.startswith("instruction").all()


def test_full_mode_is_the_cross_product(p):
    ind = indicators(2)  # stage 0 has 3 words, stage 1 has 2; 3 templates per kind
    seeds, _ = make_seeds(ind, WORDS, templates(ind), p.model_copy(update={"mode": "full"}))
    assert len(seeds) == (3 * 3 + 2 * 3) * 2


def test_identical_on_rerun_different_with_another_seed_and_local_to_an_indicator(p):
    ind = indicators()
    a, _ = make_seeds(ind, WORDS, templates(ind), p)
    b, _ = make_seeds(ind, WORDS, templates(ind), p)
    pd.testing.assert_frame_equal(a, b)
    c, _ = make_seeds(ind, WORDS, templates(ind), p.model_copy(update={"seed": 43}))
    assert set(c["seed_id"]) != set(a["seed_id"])
    changed = ind.copy()
    changed.loc[0, "indicator_id"] = "f" * 16
    d, _ = make_seeds(changed, WORDS, templates(changed), p)
    untouched = a[a["indicator_id"] != ind.loc[0, "indicator_id"]]
    assert set(untouched["seed_id"]) <= set(d["seed_id"])


def test_indicators_without_templates_are_counted(p):
    ind = indicators(2)
    seeds, stats = make_seeds(ind, WORDS, templates(ind.iloc[:1]), p)
    assert set(seeds["indicator_id"]) == {ind.loc[0, "indicator_id"]}
    assert stats["no_templates"] == 2  # one indicator x two kinds


def test_a_run_that_makes_no_seed_stops_with_the_reasons(tmp_path, monkeypatch):
    """Every template rejected: the stage used to write an empty table and exit 0."""
    from curll.artifacts import empty_table, write_table
    from curll.errors import CurllError
    from curll.schemas import IndicatorSchema, TemplateSchema, WordSchema
    from pipeline import seeds as stage

    params = load_params(ROOT / "params.yaml")
    monkeypatch.chdir(tmp_path)
    ind = indicators().assign(source="t.yaml", source_row=range(1, 5))
    write_table(ind, params.taxonomy.out.indicators, IndicatorSchema)
    words = WORDS.assign(aoa=5.0, perc_known=1.0, rank=range(5))[list(WordSchema.to_schema().columns)]
    write_table(words, params.vocab.out.words, WordSchema)
    write_table(empty_table(TemplateSchema), params.templates.out.templates, TemplateSchema)
    with pytest.raises(CurllError, match=r"no seeds: of 8 indicator x type pairs, 8 have no template") as err:
        stage.run(params)
    assert str(err.value).startswith(params.seeds.out.seeds)
    assert not Path(params.seeds.out.seeds).exists()


def test_full_mode_streams_the_same_rows_and_stats_as_in_memory(p, tmp_path):
    """The paper's cross product is written in row groups (bounded memory): same table, same stats."""
    from curll.artifacts import read_table
    from curll.seeds import Tally, stream_seeds, stream_stats
    from curll.streaming import write_table_stream

    full = p.model_copy(update={"mode": "full"})
    ind = indicators(6)
    tmpl = templates(ind)
    expected, stats = make_seeds(ind, WORDS, tmpl, full)
    tally = Tally()
    chunks = list(stream_seeds(ind, WORDS, tmpl, full, chunk_rows=10, tally=tally))
    assert len(chunks) > 2 and max(len(c) for c in chunks) < 10 + 3 * 3 * 2  # a chunk + one indicator
    n = write_table_stream(iter(chunks), tmp_path / "seeds.parquet", SeedSchema)
    got = read_table(tmp_path / "seeds.parquet", SeedSchema)
    assert n == len(expected) == 3 * (3 * 3 * 2) + 3 * (2 * 3 * 2)  # stage 0: 3 words, stage 1: 2
    pd.testing.assert_frame_equal(got, expected)
    assert stream_stats(ind, tally) == stats
