"""CL metrics on hand-made matrices with answers worked out by hand, and the CLI."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from curll.errors import CurllError
from curll.evaluate.cl import cl_metrics, read_matrix, write_matrix
from harness.commands import curll

# J[t][i]: the model trained up to stage t, scored on stage i's test set
J = pd.DataFrame(
    [[4.0, 1.0, 1.0], [4.5, 5.0, 2.0], [2.0, 4.0, 5.0]],
    index=pd.Index([0, 1, 2], name="trained_to"),
    columns=[0, 1, 2],
)
IND = pd.DataFrame([[3.0, 0, 0], [0, 4.0, 0], [0, 0, 4.0]], index=[0, 1, 2], columns=[0, 1, 2])
UNTRAINED = pd.Series({0: 1.0, 1: 1.5, 2: 1.0})


def test_series_match_the_hand_computed_values():
    m = cl_metrics(J, independent=IND, untrained=UNTRAINED)
    assert pytest.approx((4.0, 4.75, 11 / 3)) == m["AP"]
    # FGT_1 = 4 - 4.5 (stage 0 got better); FGT_2 = mean(max(4, 4.5) - 2, 5 - 4)
    assert m["FGT"] is not None and m["FGT"][0] is None and m["FGT"][1:] == pytest.approx((-0.5, 1.75))
    # BWT_2 = (2 - 4 + 4 - 5) / 2
    assert m["BWT"] is not None and m["BWT"][0] is None and m["BWT"][1:] == pytest.approx((0.5, -1.5))
    assert m["FWT"] is not None and m["FWT"][1:] == pytest.approx((1.0, 1.0))  # 5 - 4, then (1 + 5 - 4) / 2
    # zero-shot: J[0][1] - b_1 = -0.5; J[1][2] - b_2 = 1
    assert m["FWT_zero_shot"] is not None and m["FWT_zero_shot"][1:] == pytest.approx((-0.5, 0.25))
    assert m.final() == pytest.approx(
        {"AP": 11 / 3, "FGT": 1.75, "BWT": -1.5, "FWT": 1.0, "FWT_zero_shot": 0.25}
    )


def test_stages_are_matched_by_label_and_missing_cells_are_skipped():
    shifted = J.rename(index={0: 2, 1: 3, 2: 4}, columns={0: 2, 1: 3, 2: 4})
    shifted.loc[4, 2] = float("nan")  # not measured: FGT_T averages over stage 3 only
    m = cl_metrics(shifted)
    assert m["FGT"] is not None and m["FGT"][-1] == pytest.approx(1.0)
    assert m.stages == (2, 3, 4) and m.series["AP"][-1] == pytest.approx(4.5)
    without_2 = cl_metrics(J[[0, 1]])  # no test item of stage 2: its column is not measured
    full = cl_metrics(J)
    assert without_2.series["AP"][:2] == full.series["AP"][:2] and without_2.series["AP"][2] == pytest.approx(
        J.loc[2, [0, 1]].to_numpy(dtype=float).mean()
    )


def test_cli_reads_published_matrices_and_writes_the_final_values(tmp_path):
    write_matrix(J, tmp_path / "c.csv")
    write_matrix(IND, tmp_path / "i.csv")
    assert (tmp_path / "c.csv").read_text().splitlines()[0] == "trained_to,0,1,2"
    curll("metrics", "cl", "--continual", str(tmp_path / "c.csv"), "--independent", str(tmp_path / "i.csv"),
          "--out", str(tmp_path / "out.json"), cwd=tmp_path)  # fmt: skip
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["T"] == 2 and out["FGT"] == pytest.approx(1.75) and out["FWT"] == pytest.approx(1.0)
    assert out["series"]["BWT"] == {"0": None, "1": 0.5, "2": -1.5}
    curll(
        "metrics",
        "cl",
        "--continual",
        str(tmp_path / "c.csv"),
        "--out",
        str(tmp_path / "o2.json"),
        cwd=tmp_path,
    )
    assert "FWT" not in json.loads((tmp_path / "o2.json").read_text())


def test_bad_cells_are_located(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("trained_to,0,1\n0,4.0,1\n1,3.5,five\n")
    with pytest.raises(CurllError) as err:
        read_matrix(bad)
    assert (err.value.row, err.value.field) == (3, "1")
    proc = curll(
        "metrics", "cl", "--continual", str(bad), "--out", str(tmp_path / "x.json"), cwd=tmp_path, check=False
    )
    assert proc.returncode == 2 and "bad.csv" in proc.stderr and not (tmp_path / "x.json").exists()
    (tmp_path / "nohead.csv").write_text("model,0\n0,1\n")
    with pytest.raises(CurllError, match="trained_to"):
        read_matrix(tmp_path / "nohead.csv")


def test_every_missing_matrix_file_is_named_at_once(tmp_path):
    write_matrix(J, tmp_path / "c.csv")
    proc = curll("metrics", "cl", "--continual", str(tmp_path / "cont-missing.csv"), "--independent",
                 str(tmp_path / "ind-missing.csv"), "--untrained", str(tmp_path / "c.csv"),
                 "--out", str(tmp_path / "x.json"), cwd=tmp_path, check=False)  # fmt: skip
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "cont-missing.csv" in proc.stderr and "ind-missing.csv" in proc.stderr
    assert "c.csv" not in proc.stderr
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize(
    ("text", "row", "field", "says"),
    [
        ("trained_to,0,1\n", 1, None, "no data rows"),  # a header alone
        ("trained_to,0,1\n\n", 1, None, "no data rows"),
        ("", None, None, "empty"),
        ("trained_to,0,1\n0,0.5,0.2,0.9\n", 2, None, "4 cells under a header of 3"),  # a cell too many
        ("stage,0,1\n0,1,2\n", 1, "stage", "'trained_to'"),
        ("trained_to;0;1\n0;1;2\n", 1, "trained_to;0;1", "'trained_to'"),  # another delimiter
        ("trained_to,0,0\n0,1,2\n", 1, "0", "two columns"),
        ("trained_to,1,01\n1,1,2\n", 1, "01", "stage 1 has two columns"),
        ("trained_to,\u00b2\n0,1\n", 1, "\u00b2", "stage number 0..9"),  # a digit to isdigit, not to int
        ("trained_to,0\n\u00b2,1\n", 2, "trained_to", "stage number 0..9"),
        ("trained_to,0\n-2,1\n", 2, "trained_to", "stage number 0..9"),
        ("trained_to,-1,0\n0,1,2\n", 1, "-1", "stage number 0..9"),
        ("trained_to,12,13\n12,1,2\n", 1, "12", "stage number 0..9"),
        ("trained_to,0,1\n10,1,2\n", 2, "trained_to", "stage number 0..9"),
        ("trained_to,0,1\n0,1,2\n0,2,3\n", 3, "trained_to", "twice"),
        ('trained_to,0,1\n0,"1,2\n', 2, None, "unclosed quote"),
        ("trained_to,0,1\n0,inf,2\n", 2, "0", "not a number: 'inf'"),  # float() reads them
        ("trained_to,0,1\n0,1,nan\n", 2, "1", "not a number: 'nan'"),
        ("trained_to,0,1\n0,1_0,2\n", 2, "0", "not a number: '1_0'"),
    ],
)
def test_a_malformed_matrix_is_one_line_naming_its_row_and_column(tmp_path, text, row, field, says):
    bad = tmp_path / "m.csv"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(CurllError, match=says) as err:
        read_matrix(bad)
    assert (err.value.row, err.value.field) == (row, field)


def test_the_untrained_models_matrix_the_evaluate_stage_writes_is_read(tmp_path):
    untrained = pd.DataFrame([[0.5, 0.4, 0.3]], index=pd.Index([-1], name="trained_to"), columns=[0, 1, 2])
    write_matrix(untrained, tmp_path / "u.csv")
    assert (tmp_path / "u.csv").read_text().splitlines()[1].startswith("-1,")  # as evaluate writes it
    pd.testing.assert_frame_equal(read_matrix(tmp_path / "u.csv"), untrained, check_names=False)
    write_matrix(J, tmp_path / "c.csv")
    curll("metrics", "cl", "--continual", str(tmp_path / "c.csv"), "--untrained", str(tmp_path / "u.csv"),
          "--out", str(tmp_path / "out.json"), cwd=tmp_path)  # fmt: skip
    assert "FWT_zero_shot" in json.loads((tmp_path / "out.json").read_text())


def test_a_matrix_not_in_utf8_and_an_untrained_file_of_two_rows_are_refused_by_the_command(tmp_path):
    latin = tmp_path / "latin.csv"
    latin.write_bytes("trained_to,0\n0,caf\xe9\n".encode("latin-1"))
    with pytest.raises(CurllError, match="not valid UTF-8") as err:
        read_matrix(latin)
    assert err.value.row == 2
    write_matrix(J, tmp_path / "c.csv")
    for args, culprit in (
        ([("--continual", "latin.csv")], "latin.csv"),
        ([("--continual", "c.csv"), ("--untrained", "c.csv")], "3 rows"),
    ):
        flags = [x for flag, name in args for x in (flag, str(tmp_path / name))]
        proc = curll("metrics", "cl", *flags, "--out", str(tmp_path / "x.json"), cwd=tmp_path, check=False)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert culprit in proc.stderr and not (tmp_path / "x.json").exists()


def test_an_untrained_row_in_a_trained_models_matrix_is_refused_by_the_command(tmp_path):
    """FWT0 averages over models trained to 1..t: an untrained row (-1) among them would count as
    one (before, it moved FWT_zero_shot from 1.0 to 0.67); it belongs in --untrained."""
    write_matrix(J, tmp_path / "c.csv")
    rows = (tmp_path / "c.csv").read_text().splitlines()
    (tmp_path / "cu.csv").write_text(
        "\n".join([rows[0], "-1," + ",".join(["1"] * (len(J.columns))), *rows[1:]])
    )
    proc = curll("metrics", "cl", "--continual", str(tmp_path / "cu.csv"), "--out", str(tmp_path / "x.json"),
                 cwd=tmp_path, check=False)  # fmt: skip
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "cu.csv, row 2, field 'trained_to'" in proc.stderr and "--untrained" in proc.stderr
    assert not (tmp_path / "x.json").exists()
