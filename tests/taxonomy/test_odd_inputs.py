"""Inputs a user hands over as their spreadsheet saved them: a column twice, placeholder cells,
a stage header that does not parse, NUL bytes, an upper-case extension, a grade map given
twice; each is read right or refused by name, never read silently wrong."""

from __future__ import annotations

import pytest

from curll.errors import CurllError
from curll.taxonomy import TableLayout, import_taxonomy
from curll.vocab import import_vocab

HEADER = ",Skills,Sub-skills,Goals,stage-1,stage-2\n"
ROWS = ",Maths,Number,Count,Counts to 10,Counts to 100\n,,,,Adds within 5,\n"


@pytest.mark.parametrize("placeholder", ["N/A", "#N/A", "-", "n/a", "\u2014", "null"])
def test_a_placeholder_cell_is_no_indicator(write, placeholder):
    path = write("t.csv", HEADER + ROWS + f",,,,{placeholder},Counts back\n")
    df = import_taxonomy("curll-csv", [path]).table
    assert df["indicator"].tolist() == ["Counts to 10", "Counts to 100", "Adds within 5", "Counts back"]


def test_a_placeholder_in_a_hierarchy_cell_means_none_not_as_above(write):
    path = write("t.csv", HEADER + ROWS + ",,N/A,Pick a book,Picks one,\n")
    df = import_taxonomy("curll-csv", [path]).table
    got = df.iloc[-1][["skill", "subskill", "goal", "indicator"]].tolist()
    assert got == ["Maths", "Maths", "Pick a book", "Picks one"]  # no sub-skill: the skill, not "Number"
    path = write("u.csv", HEADER + ROWS + ",,,#N/A,Counts on,\n")
    with pytest.raises(CurllError, match="indicator has no Goals value on this row or above it") as err:
        import_taxonomy("curll-csv", [path])
    assert err.value.row == 4


@pytest.mark.parametrize("header", ["Stage 3 (revised)", "stage three", "Stage-2b"])
def test_a_stage_header_without_a_number_is_refused_not_dropped(write, header):
    path = write("t.csv", f",Skills,Sub-skills,Goals,stage-1,{header}\n,Maths,Number,Count,Counts,Adds\n")
    with pytest.raises(CurllError, match="a header that starts with 'stage' must read 'stage-k'") as err:
        import_taxonomy("curll-csv", [path])
    assert (err.value.row, err.value.field) == (1, header)


def test_a_folder_reads_a_csv_whatever_the_case_of_its_extension(write, tmp_path):
    write("in/AGE_5_11.CSV", HEADER + ROWS)
    write("in/notes.txt", "not a table")
    assert len(import_taxonomy("curll-csv", [tmp_path / "in"]).table) == 3


def test_a_nul_byte_is_refused_by_row(write):
    path = write("t.csv", (HEADER + ROWS + ",,,,Reads\x00 aloud,\n").encode())
    with pytest.raises(CurllError, match="NUL bytes") as err:
        import_taxonomy("curll-csv", [path])
    assert err.value.row == 4
    words = write("w.csv", b"word,pos,stage\nd\x00og,Noun,0\n")
    with pytest.raises(CurllError, match="NUL bytes"):
        import_vocab("curll-words", words)


def test_a_utf16_file_without_a_bom_is_named_as_such(write):
    path = write("t.csv", (HEADER + ROWS).encode("utf-16-le"))
    with pytest.raises(CurllError, match=r"UTF-16 or binary file\?\): re-save it as UTF-8"):
        import_taxonomy("curll-csv", [path])


def test_a_table_column_named_twice_is_refused(write):
    path = write("t.csv", "Domain,Standard,Grade 1,Grade 1\nReading,Phonics,Blends,Names letters\n")
    layout = TableLayout(skill="Domain", goal="Standard", grades={"Grade 1": 1})
    with pytest.raises(CurllError, match=r"two columns are named 'Grade 1' \(columns 3 and 4\)") as err:
        import_taxonomy("table", [path], columns=layout)
    assert err.value.row == 1


AOA = "Word,Dom_PoS_SUBTLEX,Lemma_highest_PoS,AoA_Kup_lem,Perc_known_lem"


@pytest.mark.parametrize(
    ("header", "column"),
    [(f"{AOA},AoA_Kup_lem", "AoA_Kup_lem"), (f"AoA_Kup_lem,{AOA}", "AoA_Kup_lem")],
)
def test_a_kuperman_column_named_twice_is_refused_wherever_the_copy_is(write, header, column):
    path = write("aoa.csv", f"{header}\n" + ("3,dog,Noun,dog,3.0,1.0\n" if header.startswith("AoA") else
                                             "dog,Noun,dog,3.0,1.0,8.0\n"))  # fmt: skip
    with pytest.raises(CurllError, match=f"two columns are named '{column}'") as err:
        import_vocab("kuperman", path)
    assert (err.value.row, err.value.field) == (1, column)
    words = write("w.csv", "word,pos,stage,stage\ndog,Noun,0,1\n")
    with pytest.raises(CurllError, match="two columns are named 'stage'"):
        import_vocab("curll-words", words)


def test_a_word_with_two_ages_is_refused_naming_both_rows(write):
    path = write("aoa.csv", f"{AOA}\ndog,Noun,dog,3.0,1.0\ncat,Noun,cat,3.0,1.0\ndogg,Noun,dog,3.5,0.9\n")
    for dedup in ("lemma_row", "first_row"):
        with pytest.raises(CurllError, match=r"'dog' has two ages of acquisition, 3.0 \(Noun\) in row 2 "
                                             r"and 3.5 \(Noun\) in this row") as err:  # fmt: skip
            import_vocab("kuperman", path, dedup=dedup)
        assert (err.value.row, err.value.field) == (4, "AoA_Kup_lem") and "\n" not in str(err.value)


def test_the_lemmas_nan_and_null_are_words_under_lemma_row(write):
    path = write("aoa.csv", f"{AOA}\nnan,Noun,nan,4.5,1.0\nnull,Adjective,null,4.0,0.9\n,Noun,,3.0,1.0\n")
    df = import_vocab("kuperman", path, stages=[0])
    assert sorted(df["word"]) == ["nan", "null"]


def test_the_value_in_force_written_again_keeps_the_levels_below_it(write):
    path = write("t.csv", HEADER + ROWS + ",Maths,,,Adds within 10,\n,Maths,Shapes,Name,Names a square,\n")
    df = import_taxonomy("curll-csv", [path]).table
    got = df[["subskill", "goal", "indicator"]].values.tolist()[-2:]
    assert got == [["Number", "Count", "Adds within 10"], ["Shapes", "Name", "Names a square"]]
    layout = TableLayout(skill="Subject", subskill="Strand", goal="Goal", indicator="Can do", grade="Stage",
                         grades={"0": 0, "1": 1})  # fmt: skip
    table = write("g.csv", "Subject,Strand,Goal,Can do,Stage\nReading,Phonics,Decode,Sounds out cat,0\n"
                           "Reading,,,Blends two consonants,1\n")  # fmt: skip
    rows = import_taxonomy("table", [table], columns=layout).table
    assert rows["subskill"].tolist() == ["Phonics", "Phonics"] and rows["goal"].tolist() == ["Decode"] * 2


@pytest.mark.parametrize("layout", ["curll-csv", "table"])
def test_a_row_that_repeats_the_header_is_refused_not_read_as_an_indicator(write, layout):
    text, row = HEADER + ROWS + HEADER + ",,,,Counts back,\n", 4
    columns = None
    if layout == "table":
        head = "Skill,Goal,Grade K,Grade 1\n"
        text, row = head + "Maths,Count,Counts to 10,Counts to 100\n" + head, 3
        columns = TableLayout(skill="Skill", goal="Goal", grades={"Grade K": 0, "Grade 1": 1})
    with pytest.raises(CurllError, match="repeats the header") as err:
        import_taxonomy(layout, [write("t.csv", text)], columns=columns)
    assert err.value.row == row
