"""Coverage gaps name the stage, the type and the step where the items were lost."""

from __future__ import annotations

from curll.evaluate.coverage import gaps


def test_each_gap_says_where_its_items_went():
    test = {(0, "ir"): 6, (0, "cqa"): 2, (1, "ir"): 0}
    generated = {(0, "ir"): 9, (0, "cqa"): 8, (1, "ir"): 3}
    verified = {(0, "ir"): 7, (0, "cqa"): 4}
    found = gaps(test, [1, 0], ["ir", "cqa"], 5, generated=generated, verified=verified)
    assert [(g.stage, g.type, g.test) for g in found] == [(0, "cqa", 2), (1, "ir", 0), (1, "cqa", 0)]
    assert (
        str(found[0]) == "stage 0 cqa: 2 scored test records (8 generated, 4 kept by verify, 2 went to test)"
    )
    assert (
        found[1].why() == "3 generated, verify dropped them all" and found[2].why() == "none were generated"
    )
    assert gaps(test, [0], ["ir"], 5, generated=generated, verified=verified) == []


def test_a_gap_in_imported_records_points_at_the_sample_not_at_generation():
    found = gaps({(0, "ir"): 2}, [0], ["ir", "cqa"], 5, generated=None, verified=None)
    assert [(g.type, g.test, g.generated) for g in found] == [("ir", 2, None), ("cqa", 0, None)]
    assert "split.imported.test" in str(found[0]) and "generated" not in str(found[0])
    assert "train.context" in str(found[1])
