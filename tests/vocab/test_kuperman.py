from __future__ import annotations

import pytest

from curll.errors import CurllError
from curll.schemas.data import age_group, stage_of_age
from curll.vocab import import_vocab, vocab_stats
from curll.vocab.sources import read_kuperman
from tests.conftest import reference_file

HEADER = "Word,Dom_PoS_SUBTLEX,Lemma_highest_PoS,AoA_Kup_lem,Perc_known_lem\n"


def kuperman(rows: list[str]) -> str:
    return HEADER + "".join(r + "\n" for r in rows)


@pytest.mark.parametrize(
    ("aoa", "band"), [(2.0, 0), (5.0, 0), (5.01, 1), (6.0, 1), (6.5, 2), (9.0, 4), (9.01, 5)]
)
def test_paper_band_rule(aoa, band):
    assert stage_of_age(aoa) == band


def test_filters_dedup_and_bands(write):
    path = write(
        "aoa.csv",
        kuperman(
            [
                "dog,Noun,dog,3.0,1.00",
                "dogs,Noun,dog,3.0,1.00",  # same (lemma, AoA): dropped
                "ran,Verb,run,4.5,0.98",
                "paris,Name,paris,6.0,1.00",  # not a kept part of speech
                "the,Article,the,2.0,1.00",
                "zebra,Noun,zebra,NA,0.90",  # missing AoA
                "yak,Noun,yak,5.5,#N/A",  # missing share known
                "quickly,Adverb,quickly,5.5,0.97",
                "ancient,Adjective,ancient,9.5,0.99",  # band 5: outside stages 0-4
                ",Noun,,3.0,1.00",  # missing lemma
            ]
        ),
    )
    df = import_vocab("kuperman", path, stages=[0, 1])  # stages 2-4 would get no word: refused
    assert df[["word", "pos", "stage"]].values.tolist() == [
        ["dog", "Noun", 0],
        ["run", "Verb", 0],
        ["quickly", "Adverb", 1],
    ]
    assert vocab_stats(df, range(5)) == {
        "stages": {str(s): {"words": n} for s, n in enumerate([2, 1, 0, 0, 0])}
    }


def test_cumulative_bands(write):
    path = write("aoa.csv", kuperman(["dog,Noun,dog,3.0,1.00", "quickly,Adverb,quickly,5.5,0.97"]))
    df = import_vocab("kuperman", path, stages=[0, 1], bands="cumulative")
    assert df[["word", "stage"]].values.tolist() == [["dog", 0], ["dog", 1], ["quickly", 1]]


def test_sorted_by_known_share_then_word(write):
    rows = ["b,Noun,b,3,0.90", "c,Noun,c,3,1.00", "a,Noun,a,3,0.90", "d,Verb,d,3,0.95"]
    df = import_vocab("kuperman", write("aoa.csv", kuperman(rows)), stages=[0])
    assert df["word"].tolist() == ["c", "d", "a", "b"]
    assert df["rank"].tolist() == [0, 1, 2, 3]


def test_cap_is_a_seeded_sample_in_sorted_order(write):
    rows = [f"w{i:03d},Noun,w{i:03d},4.0,{(i % 50) / 100 + 0.5:.2f}" for i in range(200)]
    path = write("aoa.csv", kuperman(rows))
    full = import_vocab("kuperman", path, stages=[0])
    a = import_vocab("kuperman", path, stages=[0], max_per_stage=20, seed=1)
    again = import_vocab("kuperman", path, stages=[0], max_per_stage=20, seed=1)
    other = import_vocab("kuperman", path, stages=[0], max_per_stage=20, seed=2)
    assert len(a) == 20 and a["rank"].tolist() == list(range(20))
    assert a.equals(again)
    assert set(a["word"]) != set(other["word"])
    order = {w: i for i, w in enumerate(full["word"])}
    assert [order[w] for w in a["word"]] == sorted(order[w] for w in a["word"])
    # a cap above the stage size keeps every word
    assert len(import_vocab("kuperman", path, stages=[0], max_per_stage=500)) == 200


def test_non_numeric_age_names_file_row_and_field(write):
    path = write("aoa.csv", kuperman(["dog,Noun,dog,3.0,1.00", "cat,Noun,cat,three,1.00"]))
    with pytest.raises(CurllError, match="expected a number, got 'three'") as err:
        import_vocab("kuperman", path)
    assert (err.value.file, err.value.row, err.value.field) == (str(path), 3, "AoA_Kup_lem")


@pytest.mark.parametrize(
    ("content", "message", "field"),
    [
        (
            "Word,Dom_PoS_SUBTLEX,AoA_Kup_lem,Perc_known_lem\nx,Noun,3,1\n",
            "missing column",
            "Lemma_highest_PoS",
        ),
        (HEADER + "dog,Noun,dog,-2,1.0\n", "outside", "AoA_Kup_lem"),
        (HEADER + "dog,Noun,dog,3,1.5\n", "outside", "Perc_known_lem"),
        (
            HEADER + "dog,Noun,dog,1_0.6,1.0\n",
            "expected a number, got '1_0.6'",
            "AoA_Kup_lem",
        ),  # float() reads 10.6
        (HEADER + "dog,Noun,dog,3,inf\n", "expected a number, got 'inf'", "Perc_known_lem"),
        (HEADER + "dog,Noun,dog,None,1\n", "expected a number, got 'None'", "AoA_Kup_lem"),
        (
            HEADER + "dog,Noun,dog,\u0663.5,1\n",
            "expected a number, got '\u0663.5'",
            "AoA_Kup_lem",
        ),  # Arabic-Indic 3
    ],
)
def test_bad_aoa_files(write, content, message, field):
    with pytest.raises(CurllError, match=message) as err:
        import_vocab("kuperman", write("aoa.csv", content))
    assert err.value.field == field


def test_a_missing_number_is_missing_in_any_case(write):
    rows = ["dog,Noun,dog,3.0,1.00", "cat,Noun,cat,NAN,1", "cow,Noun,cow,nan,1", "pig,Noun,pig,Null,1"]
    assert [c.word for c in read_kuperman(write("aoa.csv", kuperman(rows)))] == ["dog"]


def test_empty_and_non_utf8_files(write):
    with pytest.raises(CurllError, match="empty"):
        import_vocab("kuperman", write("e.csv", b""))
    with pytest.raises(CurllError, match="UTF-8") as err:
        import_vocab("kuperman", write("l.csv", HEADER.encode() + b"caf\xe9,Noun,caf\xe9,3,1\n"))
    assert err.value.row == 2


@pytest.mark.reference
def test_reference_norms_follow_the_paper_rule():
    path = reference_file("aoa", "AoA_51715_words.csv")
    capped = import_vocab("kuperman", path, stages=range(5), max_per_stage=1000, seed=42)
    full = import_vocab("kuperman", path, stages=range(5))
    counts = full.groupby("stage").size().tolist()
    assert counts[:2] == [901, 960] and all(n > 1000 for n in counts[2:])
    assert capped.groupby("stage").size().tolist() == [901, 960, 1000, 1000, 1000]
    assert set(capped["pos"]) <= {"Noun", "Verb", "Adjective", "Adverb"}
    for key, part in full.groupby("stage"):
        stage = int(str(key))
        lo, hi = (0.0, 5.0) if stage == 0 else (4.0 + stage, 5.0 + stage)
        assert part["aoa"].max() <= hi and (stage == 0 or part["aoa"].min() > lo)


@pytest.mark.reference
def test_no_function_word_of_the_norms_comes_out_as_a_content_word():
    """Duplicates are removed over all rows before the part-of-speech filter (the authors'
    order): the other way round, "ands" (Noun, lemma "and") stood in for "and" (Conjunction)."""
    import csv

    path = reference_file("aoa", "AoA_51715_words.csv")
    with path.open(encoding="utf-8-sig", newline="") as f:
        own = {
            r["Word"]: r["Dom_PoS_SUBTLEX"] for r in csv.DictReader(f) if r["Word"] == r["Lemma_highest_PoS"]
        }
    words = import_vocab("kuperman", path, stages=range(5))
    assert {"and", "in", "or", "but", "hello"}.isdisjoint(words["word"])
    # closed classes; "Name" is not one ("berry" is tagged Name, its plural "berries" Noun)
    function = {"Article", "Conjunction", "Preposition", "Pronoun", "Determiner", "Interjection", "Number",
                "To", "Not", "Ex"}  # fmt: skip
    assert [w for w in words["word"] if own.get(w) in function] == []
    assert import_vocab("kuperman", path, stages=range(5), max_per_stage=1000, seed=42).equals(
        import_vocab("kuperman", path, stages=range(5), max_per_stage=1000, seed=42)
    )  # the stage caps draw the same seeded sample on every run


def test_a_header_without_rows_and_an_unclosed_quote_are_refused(write):
    """Both used to pass: the first wrote 0 words and exited 0; the second merged every row
    after the quote into one cell."""
    with pytest.raises(CurllError, match="no data rows") as err:
        import_vocab("kuperman", write("h.csv", HEADER))
    assert err.value.row == 1
    rows = 'dog,Noun,dog,3,1.0\ncat,Noun,"cat,4,1.0\nsun,Noun,sun,5,1.0\nmoon,Noun,moon,6,1.0\n'
    with pytest.raises(CurllError, match="unclosed quote") as err:
        import_vocab("kuperman", write("q.csv", HEADER + rows))
    assert err.value.row == 3


def test_no_word_in_any_requested_stage_is_refused(write):
    with pytest.raises(
        CurllError, match=r"no word for stage\(s\) \[4\] \(of \[4\] asked for\): none of the file's 1 "
    ):
        import_vocab("kuperman", write("a.csv", HEADER + "dog,Noun,dog,3,1.0\n"), stages=[4])


def test_a_requested_stage_with_no_word_is_refused_naming_it_and_the_file(write):
    path = write("b.csv", HEADER + "dog,Noun,dog,3,1.0\nsun,Noun,sun,6.5,1.0\n")  # stages 0 and 2
    assert sorted(import_vocab("kuperman", path, stages=[0, 2])["stage"]) == [0, 2]
    with pytest.raises(
        CurllError, match=r"no word for stage\(s\) \[1, 3\] \(of \[0, 1, 2, 3\] asked for\)"
    ) as err:
        import_vocab("kuperman", path, stages=[0, 1, 2, 3])
    assert err.value.file == str(path) and "their band" in str(err.value)


def test_first_row_is_the_authors_order_lemma_row_prefers_the_lemmas_own_row(write):
    rows = [
        "anybodies,Noun,anybody,4.0,0.90",  # first in file order, an inflection's tag
        "anybody,Pronoun,anybody,4.0,0.95",  # the lemma's own row
        "cats,Noun,cat,3.0,#N/A",  # first of (cat, 3.0) has a gap: first_row loses "cat" ...
        "cat,Noun,cat,3.0,1.00",  # ... lemma_row keeps this one
        "null,Adjective,null,6.0,0.80",  # pandas reads the lemma "null" as missing
        "zoo,Noun,zoo,NA,0.90",  # the first (zoo, NA) row ...
        "zoo,Noun,zoo,NA,0.95",  # ... and its repeat: both go (a gap)
        "dog,Noun, ,3.5,1.00",  # a blank lemma is no word, under either rule
        "sun,Noun,sun,5.5,1.00",  # a word of stage 1 under either rule
    ]
    path = write("aoa.csv", kuperman(rows))
    first = import_vocab("kuperman", path, stages=[0, 1], dedup="first_row")
    own = import_vocab("kuperman", path, stages=[0, 1], dedup="lemma_row")
    assert first[["word", "pos"]].values.tolist() == [["anybody", "Noun"], ["sun", "Noun"]]
    assert own[["word", "pos"]].values.tolist() == [["cat", "Noun"], ["sun", "Noun"], ["null", "Adjective"]]
    with pytest.raises(CurllError, match="lemma_row or first_row"):
        import_vocab("kuperman", path, dedup="last_row")  # type: ignore[arg-type]


@pytest.mark.reference
def test_first_row_gives_the_authors_words_on_the_reference_norms():
    """The authors' procedure written with pandas, as they ran it (read_csv's missing values,
    drop_duplicates keeping the first, dropna, the bands, the four parts of speech), against
    the importer's first_row on the same file: the same words at every stage 0-9."""
    import pandas as pd

    path = reference_file("aoa", "AoA_51715_words.csv")
    cols = ["Dom_PoS_SUBTLEX", "Lemma_highest_PoS", "AoA_Kup_lem", "Perc_known_lem"]
    norms = pd.read_csv(path)[cols].drop_duplicates(subset=cols[1:3]).dropna()
    norms = norms[norms["Dom_PoS_SUBTLEX"].isin(["Noun", "Verb", "Adjective", "Adverb"])]
    got = import_vocab("kuperman", path, stages=range(10), dedup="first_row")
    for stage in range(10):
        lo, hi = (-1.0, 5.0) if stage == 0 else (4.0 + stage, 5.0 + stage)
        band = norms[(norms["AoA_Kup_lem"] > lo) & (norms["AoA_Kup_lem"] <= hi)]
        theirs = sorted(zip(band["Lemma_highest_PoS"], band["Dom_PoS_SUBTLEX"], strict=True))
        ours = got[got["stage"] == stage]
        assert sorted(zip(ours["word"], ours["pos"], strict=True)) == theirs, stage
    counts = got.groupby("stage").size().tolist()
    assert counts == [903, 964, 1386, 1859, 2579, 3147, 3605, 3821, 3768, 3143]  # the table in docs/data.md
    lemma_row = import_vocab("kuperman", path, stages=range(10)).groupby("stage").size().tolist()
    assert lemma_row == [901, 960, 1386, 1863, 2581, 3145, 3604, 3822, 3768, 3142]  # lemmas in any case


def test_a_part_of_speech_in_another_case_is_the_same_tag(write):
    rows = ["dog,noun,dog,3.0,1.00", "ran,VERB,run,4.5,0.98", "paris,name,paris,3.0,1.00"]
    df = import_vocab("kuperman", write("aoa.csv", kuperman(rows)), stages=[0])
    assert df[["word", "pos"]].values.tolist() == [["dog", "Noun"], ["run", "Verb"]]


@pytest.mark.parametrize("dedup", ["lemma_row", "first_row"])
def test_an_accent_typed_either_way_or_a_zero_width_space_is_one_word(write, dedup):
    rows = ["caf\u00e9,Noun,caf\u00e9,3.0,1.00", "cafe\u0301,Noun,cafe\u0301,3.0,1.00",
            "dog\u200b,Noun,dog\u200b,3.0,1.00", "dog,Noun,dog,3.0,1.00"]  # fmt: skip
    df = import_vocab("kuperman", write("aoa.csv", kuperman(rows)), stages=[0], dedup=dedup)
    assert sorted(df["word"]) == ["caf\u00e9", "dog"]


@pytest.mark.parametrize("stage", range(10))
def test_band_is_the_stage_whose_age_group_holds_the_age(stage):
    """A word's band and a stage's ages are one mapping read both ways: every age inside
    ``age_group(stage)`` (its upper end included, its lower end not, but age 0) maps back to it."""
    lo, hi = (int(a) for a in age_group(stage).split("-"))
    assert lo < hi
    for age in (hi, hi - 0.5, lo + 0.01) if stage else (0.0, 2.5, hi):
        assert stage_of_age(age) == stage
    assert stage_of_age(hi + 0.01) == stage + 1


def test_a_lemma_in_two_cases_is_one_word_and_two_ages_of_it_are_refused(write):
    rows = ["brownies,Noun,Brownie,4.8,1.00", "brownie,Noun,brownie,4.8,1.00", "cat,Noun,cat,3.0,1.00"]
    df = import_vocab("kuperman", write("aoa.csv", kuperman(rows)), stages=[0])
    assert sorted(df["word"]) == ["brownie", "cat"]  # the lemma's own row, in its own case
    first = import_vocab("kuperman", write("aoa.csv", kuperman(rows)), stages=[0], dedup="first_row")
    assert sorted(first["word"]) == ["Brownie", "brownie", "cat"]  # the authors' code keeps both
    clash = write("clash.csv", kuperman(["dog,Noun,dog,3.5,1.00", "Dog,Noun,Dog,7.5,0.90"]))
    with pytest.raises(CurllError, match=r"'Dog' has two ages of acquisition, 3.5 \(Noun\) in row 2") as err:
        import_vocab("kuperman", clash, stages=range(5))
    assert err.value.row == 3
    own = write("w.csv", "word,pos,stage\ndog,Noun,0\nDog,Noun,2\n")
    with pytest.raises(CurllError, match=r"duplicate of row 2 \(in any case\)") as err:
        import_vocab("curll-words", own, stages=range(5))
    assert err.value.row == 3


def test_a_word_with_two_ages_is_refused_whatever_its_parts_of_speech(write):
    """walk as a verb at 4.0 and as a noun at 5.5 (exclusive bands would put it in stages 0 and
    1): the norms give a lemma one age, so the file is refused naming both rows; before, only two
    ages of one part of speech were. One age under two parts of speech is one word."""
    clash = write("clash.csv", kuperman(["walk,Verb,walk,4.0,1.00", "walks,Noun,walk,5.5,0.90"]))
    with pytest.raises(
        CurllError, match=r"'walk' has two ages of acquisition, 4.0 \(Verb\) in row 2 and 5.5"
    ) as err:
        import_vocab("kuperman", clash, stages=range(5))
    assert err.value.row == 3
    same = write("same.csv", kuperman(["run,Verb,run,4.0,1.00", "run,Noun,run,4.0,1.00"]))
    assert import_vocab("kuperman", same, stages=[0])["word"].tolist() == ["run"]
