from __future__ import annotations

import pytest

from curll.errors import CurllError
from curll.taxonomy import import_taxonomy, indicator_id, taxonomy_stats
from tests.conftest import reference_file

HEADER = ",Skills,Sub-skills,Goals,stage-1,stage-2\n"


def test_hierarchy_is_forward_filled_but_indicators_are_not(write):
    path = write(
        "t.csv",
        HEADER
        + ",Maths,Number,Count,Counts to 10,Counts to 100\n"
        + ",,,,Adds within 5,\n"  # no stage-2 cell: must not inherit "Counts to 100"
        + ",,,Compare,Says which is more,Orders numbers\n"
        + ",,Shape,Name shapes,Names a circle,\n",
    )
    df = import_taxonomy("curll-csv", [path]).table
    got = list(
        df[["stage", "subskill", "goal", "indicator", "source_row"]].itertuples(index=False, name=None)
    )
    assert got == [
        (1, "Number", "Count", "Counts to 10", 2),
        (2, "Number", "Count", "Counts to 100", 2),
        (1, "Number", "Count", "Adds within 5", 3),
        (1, "Number", "Compare", "Says which is more", 4),
        (2, "Number", "Compare", "Orders numbers", 4),
        (1, "Shape", "Name shapes", "Names a circle", 5),
    ]
    assert set(df["skill"]) == {"Maths"}
    assert list(df["age_group"].unique()) == ["5-6", "6-7"]


def test_new_skill_clears_lower_levels(write):
    path = write("t.csv", HEADER + ",Maths,Number,Count,Counts,\n" + ",Science,,,Observes,\n")
    with pytest.raises(CurllError) as err:
        import_taxonomy("curll-csv", [path])
    assert (err.value.row, err.value.field) == (3, "Sub-skills")
    assert "t.csv" in str(err.value)


def test_header_variants_and_whitespace(write):
    path = write(
        "t.csv",
        "Skill , Subskills,Goal,Stage-1, Stage 3,stage - 4\n"
        + '  Maths ,Number,  Count \t,"  Counts\n to 10  ",x,y\n',
    )
    df = import_taxonomy("curll-csv", [path]).table
    assert df[["skill", "goal"]].iloc[0].tolist() == ["Maths", "Count"]
    assert df["indicator"].tolist() == ["Counts to 10", "x", "y"]
    assert df["stage"].tolist() == [1, 3, 4]


def test_ids_are_content_hashes_stable_under_reordering(write):
    header = ",Skills,Sub-skills,Goals,stage-1\n"
    rows = [",Maths,Number,Count,Counts to 10\n", ",English,Reading,Decode,Reads cat\n"]
    a = import_taxonomy("curll-csv", [write("a.csv", header + "".join(rows))]).table
    b = import_taxonomy("curll-csv", [write("b.csv", header + "".join(reversed(rows)))]).table
    assert set(a["indicator_id"]) == set(b["indicator_id"])
    assert a["indicator_id"].iloc[0] == indicator_id(1, "Maths", "Number", "Count", "Counts to 10")
    # the same sentence under another goal or stage is another indicator
    assert indicator_id(1, "Maths", "Number", "Count", "x") != indicator_id(
        2, "Maths", "Number", "Count", "x"
    )
    assert indicator_id(1, "Maths", "Number", "Count", "x") != indicator_id(
        1, "Maths", "Number", "Other", "x"
    )


def test_duplicate_indicator_is_refused(write):
    path = write("t.csv", HEADER + ",Maths,Number,Count,Counts,\n,,,,Counts,\n")
    with pytest.raises(CurllError, match="duplicate indicator") as err:
        import_taxonomy("curll-csv", [path])
    assert (err.value.row, err.value.field) == (3, "stage-1")


def test_stage_column_without_indicators_is_refused(write):
    path = write("t.csv", HEADER + ",Maths,Number,Count,Counts,\n")
    with pytest.raises(CurllError, match="stage 2 column has no indicators") as err:
        import_taxonomy("curll-csv", [path])
    assert err.value.field == "stage-2"


@pytest.mark.parametrize(
    ("content", "message", "row", "field"),
    [
        (b"", "file is empty", None, None),
        (b"  \n", "file is empty", None, None),
        (HEADER.encode() + b",Maths,Number,Count,Caf\xe9,x\n", "not valid UTF-8", 2, None),
        # rows are the spreadsheet's: a cell over two lines is one row, and so is a lone-CR line
        (
            HEADER.encode() + b',Maths,Number,"Count,\non",x,y\n,,,,b,c\n,,,,Caf\xe9,x\n',
            "not valid UTF-8",
            4,
            None,
        ),
        (
            HEADER.replace("\n", "\r").encode() + b",Maths,Number,Count,a,b\r,,,,Caf\xe9,x\r",
            "not valid UTF-8",
            3,
            None,
        ),
        (HEADER.encode() + b',Maths,Number,"Count,\non",x,y\n,,,,\x00,x\n', "NUL bytes", 3, None),
        (
            b"\xef\xbb\xbf" + HEADER.encode() + b",Caf\xc3\xa9,N,C,x,y\n,,,,b\xff,x\n",
            r"byte 0xff at offset 64",
            3,
            None,
        ),
        (
            HEADER.encode() + b',Maths,Number,"Count,\non",x,y\n,,,,"open,x\n,,,,a,b\n',
            "unclosed quote",
            3,
            None,
        ),
        (b",Skills,Goals,stage-1\n,Maths,Count,x\n", "missing column", 1, "Sub-skills"),
        (b",Skills,Sub-skills,Goals\n,Maths,N,Count\n", "no stage columns", 1, None),
        # another script's digit one (Arabic-Indic, fullwidth): \d would read stage 1
        (
            ",Skills,Sub-skills,Goals,stage-\u0661\n,Maths,N,Count,x\n".encode(),
            "must read 'stage-k'",
            1,
            "stage-\u0661",
        ),
        (
            ",Skills,Sub-skills,Goals,stage-\uff11\n,Maths,N,Count,x\n".encode(),
            "must read 'stage-k'",
            1,
            "stage-\uff11",
        ),
        (b",Skills,Sub-skills,Goals,Stage-12\n,Maths,N,Count,x\n", "stage 12 is above 9", 1, "Stage-12"),
        # a minus sign, not the joiner of "stage-1": not to be read as stage 1
        (b",Skills,Sub-skills,Goals,Stage -1\n,Maths,N,Count,x\n", "cannot be negative", 1, "Stage -1"),
        (b",Skills,Sub-skills,Goals,stage--2\n,Maths,N,Count,x\n", "cannot be negative", 1, "stage--2"),
        (  # an unquoted comma: the text after it would be lost, or every later cell shifted
            HEADER.encode() + b",Maths,Number,Count,Writes words, then reads them aloud,Spells\n",
            r"7 cells under a header of 6, the extra ones not empty \('Spells'\)",
            2,
            None,
        ),
    ],
)
def test_bad_files_name_file_row_and_field(write, content, message, row, field):
    path = write("bad.csv", content)
    with pytest.raises(CurllError, match=message) as err:
        import_taxonomy("curll-csv", [path])
    assert err.value.file is not None and err.value.file.endswith("bad.csv")
    assert (err.value.row, err.value.field) == (row, field)


def test_requested_stage_must_exist(write):
    path = write("t.csv", HEADER + ",Maths,Number,Count,Counts,More\n")
    assert import_taxonomy("curll-csv", [path], stages=[2]).table["stage"].tolist() == [2]
    says = (
        r"no indicator for stage\(s\) \[4\] of the stages asked for \[1, 4\]; the input has stage\(s\) \[1, 2"
    )
    with pytest.raises(CurllError, match=says) as err:
        import_taxonomy("curll-csv", [path], stages=[1, 4])
    assert err.value.file == str(path) and err.value.field == "stages"


# The paper's Table 1 (stages 0-4): skills, sub-skills, goals, indicators.
PAPER_TABLE_1 = {
    "0": {"skills": 7, "subskills": 24, "goals": 59, "indicators": 182},
    "1": {"skills": 7, "subskills": 29, "goals": 86, "indicators": 292},
    "2": {"skills": 6, "subskills": 26, "goals": 67, "indicators": 249},
    "3": {"skills": 6, "subskills": 26, "goals": 68, "indicators": 271},
    "4": {"skills": 6, "subskills": 23, "goals": 70, "indicators": 349},
}


@pytest.mark.reference
def test_reference_csvs_match_paper_table_1():
    folder = reference_file("curll-taxonomy")
    files = [folder / "age_0_5.csv", folder / "age_5_11.csv"]
    df = import_taxonomy("curll-csv", files, stages=range(5)).table
    stats = taxonomy_stats(df)
    assert stats["duplicates_dropped"] == 0
    assert {stage: {k: v for k, v in counts.items() if k != "duplicates_dropped"}
            for stage, counts in stats["stages"].items()} == PAPER_TABLE_1  # fmt: skip
    assert df["indicator_id"].is_unique


def test_an_empty_cell_past_the_header_is_no_cell_and_a_folder_is_named(write, tmp_path):
    path = write("t.csv", HEADER + ",Maths,Number,Count,Counts,More,,\n")  # as spreadsheets export
    assert import_taxonomy("curll-csv", [path]).table["indicator"].tolist() == ["Counts", "More"]
    from curll.csvio import read_csv

    with pytest.raises(CurllError, match="is a folder; expected a CSV file"):
        read_csv(tmp_path)


def test_an_accent_typed_either_way_or_a_zero_width_space_is_one_indicator(write):
    composed, decomposed = "Reads caf\u00e9 aloud", "Reads cafe\u0301 aloud"
    path = write("t.csv", HEADER + f",Maths,Number,Count,{composed},More\n,,,,{decomposed}\u200b,\n")
    with pytest.raises(CurllError, match="duplicate indicator"):
        import_taxonomy("curll-csv", [path])
    one = import_taxonomy("curll-csv", [write("u.csv", HEADER + f",Maths,Number,Count,{decomposed},More\n")])
    assert one.table["indicator"].tolist() == [composed, "More"]
    assert one.table["indicator_id"].tolist()[0] == indicator_id(1, "Maths", "Number", "Count", composed)
