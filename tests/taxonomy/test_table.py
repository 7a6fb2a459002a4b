"""Your own curriculum (layout ``table``): columns named in params, grades mapped to stages."""

from __future__ import annotations

from pathlib import Path

import pytest

from curll.errors import CurllError
from curll.taxonomy import TableLayout, import_taxonomy

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "my_curriculum.csv"
FLAT = TableLayout(
    skill="Subject", subskill="Strand", goal="Learning goal", indicator="Can do", grade="Grade",
    grades={"K": 0, "1": 1, "2": 2, "3": None},
)  # fmt: skip
WIDE = TableLayout(skill="Domain", goal="Standard", grades={"Grade 1": 1})


def test_the_readme_example_one_indicator_a_row():
    df = import_taxonomy("table", [EXAMPLE], columns=FLAT).table
    assert df.groupby("stage").size().to_dict() == {0: 3, 1: 6, 2: 4}  # grade 3 mapped to null: left out
    first = df.iloc[0]
    assert (first["skill"], first["subskill"], first["goal"], first["stage"], first["age_group"]) == (
        "Reading", "Phonics", "Decode short words", 0, "0-5",
    )  # fmt: skip
    assert (first["source"], first["source_row"]) == ("my_curriculum.csv", 2)


def test_grades_as_columns_fill_the_hierarchy_down_and_any_case_header_matches(write):
    path = write(
        "standards.csv",
        "DOMAIN,Standard,Grade K,Grade 1,Notes\n"
        "Reading,Phonics,Names the letters,Blends sounds,x\n"
        ",Fluency,,Reads aloud,\n"
        "Maths,Counting,Counts to ten,,\n",
    )
    layout = TableLayout(skill="Domain", goal="Standard", grades={"Grade K": 6, "grade 1": 7})
    df = import_taxonomy("table", [path], columns=layout).table
    got = df[["stage", "skill", "subskill", "goal", "indicator"]].values.tolist()
    assert got == [
        [6, "Reading", "Reading", "Phonics", "Names the letters"],  # no sub-skill column: the skill
        [7, "Reading", "Reading", "Phonics", "Blends sounds"],
        [7, "Reading", "Reading", "Fluency", "Reads aloud"],
        [6, "Maths", "Maths", "Counting", "Counts to ten"],
    ]


@pytest.mark.parametrize(
    ("text", "layout", "row", "field", "message"),
    [
        ("Subject,Strand,Learning goal,Can do,Grade\nA,B,C,D,4\n", FLAT, 2, "Grade", "grade '4' is not in"),
        ("Subject,Strand,Learning goal,Can do,Grade\nA,B,C,D,\n", FLAT, 2, "Grade", "no grade"),
        ("Subject,Strand,Goal,Can do,Grade\nA,B,C,D,K\n", FLAT, 1, "Learning goal", "no column 'Learning"),
        ("Subject,Strand,Learning goal,Can do,Grade\n,B,C,D,K\n", FLAT, 2, "Subject", "no Skills"),
        ("Domain,Standard,Grade K\nA,B,C\n", WIDE, 1, "Grade 1", "taxonomy.grades"),
    ],
)  # fmt: skip
def test_bad_tables_name_file_row_and_column(write, text, layout, row, field, message):
    path = write("mine.csv", text)
    with pytest.raises(CurllError, match=message) as err:
        import_taxonomy("table", [path], columns=layout)
    assert (err.value.row, err.value.field) == (row, field)
    assert str(err.value.file).endswith("mine.csv")


def test_the_layout_and_its_columns_go_together(write):
    path = write("mine.csv", "Subject,Strand,Learning goal,Can do,Grade\nA,B,C,D,K\n")
    with pytest.raises(CurllError, match="needs its columns"):
        import_taxonomy("table", [path])
    with pytest.raises(CurllError, match="for the table layout"):
        import_taxonomy("curll-csv", [path], columns=FLAT)
    with pytest.raises(CurllError, match="both the indicator and the grade"):
        TableLayout(skill="Subject", goal="Learning goal", indicator="Can do", grades={"K": 0})
