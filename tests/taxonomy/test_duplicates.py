"""A published curriculum that repeats an indicator cell: refused by default, or imported with
the repeat dropped, named and counted (``taxonomy.duplicates: drop``)."""

from __future__ import annotations

import pytest

from curll.errors import CurllError
from curll.taxonomy import import_taxonomy, taxonomy_stats

# the authors' later-stages layout: a BOM, an unnamed index column, "Goal", "Stage-N" columns
LATER = (
    "\ufeff,Skills,Sub-skills,Goal,Stage-7,Stage-8,Stage-9\n"
    "1,English,Reading,Reads for meaning,Summarises a chapter,Compares two authors,Weighs evidence\n"
    "2,,,,Infers a motive,Infers a motive,\n"  # the same text at stages 7 and 8: not a repeat
    "3,,,,Infers a motive,,\n"  # stage 7 again, same goal: the repeat (row 4)
    "4,,,Writes to argue,Infers a motive,,States a claim\n"  # same text, another goal: not a repeat
)


def test_a_repeated_cell_stops_the_import_naming_its_row_by_default(write):
    path = write("age_11_14.csv", LATER)
    with pytest.raises(CurllError) as err:
        import_taxonomy("curll-csv", [path])
    assert (err.value.row, err.value.field) == (4, "Stage-7")
    assert "same skill, sub-skill and goal as row 3" in str(err.value)
    assert "duplicates" in str(err.value)  # says how to get through


def test_drop_keeps_the_first_names_the_repeat_and_counts_it(write):
    path = write("age_11_14.csv", LATER)
    got = import_taxonomy("curll-csv", [path], duplicates="drop")
    df = got.table
    assert sorted(df["stage"].unique()) == [7, 8, 9]
    assert list(df["age_group"].unique()) == ["11-12", "12-13", "13-14"]
    motive = df[df["indicator"] == "Infers a motive"]
    assert motive[["stage", "goal", "source_row"]].values.tolist() == [
        [7, "Reads for meaning", 3],
        [8, "Reads for meaning", 3],
        [7, "Writes to argue", 5],
    ]
    assert [(d.dropped.source_row, d.dropped.source_field, d.first.source_row) for d in got.dropped] == [
        (4, "Stage-7", 3)
    ]
    assert "age_11_14.csv, row 4, field 'Stage-7'" in got.dropped[0].describe()
    stats = taxonomy_stats(df, got.dropped)
    assert stats["duplicates_dropped"] == 1
    assert {s: c["duplicates_dropped"] for s, c in stats["stages"].items()} == {"7": 1, "8": 0, "9": 0}
    assert stats["stages"]["7"]["indicators"] == 3


def test_drop_changes_nothing_without_repeats_and_the_policy_is_checked(write):
    path = write("t.csv", ",Skills,Sub-skills,Goals,stage-1\n,Maths,Number,Count,Counts to 10\n")
    a, b = import_taxonomy("curll-csv", [path]), import_taxonomy("curll-csv", [path], duplicates="drop")
    assert a.table.equals(b.table) and b.dropped == []
    with pytest.raises(CurllError, match="error or drop"):
        import_taxonomy("curll-csv", [path], duplicates="keep")  # type: ignore[arg-type]


def test_a_repeat_across_two_files_of_one_name_names_each_by_its_path(write):
    a, b = write("a/x.csv", LATER.split("3,,,")[0]), write("b/x.csv", LATER.split("3,,,")[0])
    with pytest.raises(CurllError) as err:
        import_taxonomy("curll-csv", [a, b])
    assert err.value.file == str(b) and f"as row 2 of {a})" in str(err.value)
    got = import_taxonomy("curll-csv", [a, b], duplicates="drop")
    assert all(f"of {a} (" in d.describe() and d.describe().startswith(str(b)) for d in got.dropped)
    assert set(got.table["source"]) == {"x.csv"}  # the table keeps the file's name, not where it lay


def test_a_repeat_in_a_yaml_taxonomy_names_the_file_rows_of_both_goals(write):
    """The same goal twice (rows 2 and 6 of the file), one indicator in both: the error gives
    file rows, as every other YAML error does, not the goals' places in the list."""
    text = ("goals:\n  - {skill: A, subskill: B, goal: C, indicators: {1: [Counts to ten]}}\n\n"
            "  # the same goal again\n\n  - skill: A\n    subskill: B\n    goal: C\n"
            "    indicators: {1: [Counts to ten]}\n")  # fmt: skip
    with pytest.raises(CurllError) as err:
        import_taxonomy("curll-yaml", [write("t.yaml", text)])
    assert (err.value.row, err.value.field) == (6, "goals.1.indicators.1")
    assert "same skill, sub-skill and goal as row 2 of" in str(err.value)
