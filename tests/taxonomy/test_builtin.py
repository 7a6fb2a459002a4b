from __future__ import annotations

from pathlib import Path

import pytest

from curll.errors import CurllError
from curll.taxonomy import import_taxonomy

BUILTIN = Path(__file__).resolve().parents[2] / "src" / "curll" / "resources" / "taxonomy_builtin.yaml"
EARLY_YEARS = {
    "Approaches to Learning",
    "Social and Emotional Development",
    "Language and Communication",
    "Literacy",
    "Mathematics Development",
    "Scientific Reasoning",
    "Perceptual, Motor, and Physical Development",
}
SCHOOL = {"English", "Mathematics", "Science", "Computing", "Digital Literacy", "Global Perspectives"}


def test_builtin_taxonomy_covers_stages_and_skill_areas():
    df = import_taxonomy("curll-yaml", [BUILTIN]).table
    assert sorted(df["stage"].unique()) == [0, 1, 2, 3, 4]
    assert df.groupby("stage").size().min() >= 12
    assert set(df.loc[df["stage"] == 0, "skill"]) == EARLY_YEARS
    for stage in range(1, 5):
        assert set(df.loc[df["stage"] == stage, "skill"]) == SCHOOL


@pytest.mark.parametrize(
    ("text", "row", "field"),
    [
        ("goals: []\n", None, "goals"),
        ("goals:\n  - {skill: A, subskill: B, indicators: {1: [x]}}\n", 2, "goals.0.goal"),
        (
            "goals:\n  - {skill: A, subskill: B, goal: C, indicators: {one: [x]}}\n",
            2,
            "goals.0.indicators.one",
        ),
        ("goals:\n  - {skill: A, subskill: B, goal: C, indicators: {1: []}}\n", 2, "goals.0.indicators.1"),
        ("goals:\n  - {skill: A, subskill: B, goal: C, indicators: {12: [x]}}\n", 2, "goals.0.indicators.12"),
        ("goals:\n  - {skill: A, subskill: B, goal: C, indicators: {1: [x]}, note: y}\n", 2, "goals.0.note"),
        # a second, misspelt list would be left out unread
        ("goals:\n  - {skill: A, subskill: B, goal: C, indicators: {1: [x]}}\ngoals2: []\n", None, "goals2"),
        ("goals:\n  - {skill: A, subskill: B, goal: C, indicators: {'1': [x]}}\n", 2, "goals.0.indicators.1"),
        # the file's row where the goal starts, not its place in the list
        (
            "goals:\n  - {skill: A, subskill: B, goal: C, indicators: {1: [x]}}\n\n  # a note\n  - skill: A\n"
            "    goal: C\n    indicators: {1: [x]}\n",
            5,
            "goals.1.subskill",
        ),
    ],
)
def test_yaml_layout_errors_name_block_and_field(write, text, row, field):
    with pytest.raises(CurllError) as err:
        import_taxonomy("curll-yaml", [write("t.yaml", text)])
    assert (err.value.row, err.value.field) == (row, field)
    if field == "goals2":
        assert "unknown top-level key(s) ['goals2']" in err.value.message
    if "'1'" in text:
        assert "got the text '1': leave out the quotes" in err.value.message


def test_a_csv_read_in_the_yaml_layout_says_which_layouts_read_a_csv(write):
    for text in (",Skills,Sub-skills,Goals,stage-1\n,A,B,C,x\n", "Skills;Goals\nA;B\n"):  # not YAML; a scalar
        with pytest.raises(CurllError, match=r"a CSV is read with layout curll-csv or table$"):
            import_taxonomy("curll-yaml", [write("t.csv", text)])
