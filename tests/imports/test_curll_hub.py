"""``curll release import --layout curll-hub``: every card layout of the authors' release, read
into curll's records (harness/hub_files.py writes the folders a download gives)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curll.artifacts import read_table
from curll.chat import question_of, turns_of
from curll.errors import CurllError
from curll.imports import import_release, parse_source
from curll.schemas import RecordSchema
from harness.commands import curll
from harness.hub_files import rows, write_repo

SYSTEM = "You are a friendly teacher."


@pytest.fixture
def release(tmp_path: Path) -> tuple[list[Path], dict[tuple[int, str, str], int]]:
    """A folder of every kind (stage as a string in most, int64 where the cards say so), and the
    records each should give per (stage, type, split), counted here from what was written."""
    root = tmp_path / "hub"
    folders = [
        write_repo(root, "stage3_cqa", "cqa", {"train": rows("cqa", 3, 5)}, files=2),
        write_repo(root, "stage0_csqa", "csqa", {"train": rows("csqa", 0, 4, pairs=3)}),
        write_repo(root, "stage3_instruct", "instruct", {"train": rows("instruct", 3, 6),
                   "val": rows("instruct", 3, 2), "test": rows("instruct", 3, 3)}),
        write_repo(root, "stage3_cqa_eval", "cqa_eval",
                   {"val": rows("cqa_eval", 3, 4), "test": rows("cqa_eval", 3, 6)}),
        write_repo(root, "stage0_csqa_eval", "csqa_eval",
                   {"val": rows("csqa_eval", 0, 2), "test": rows("csqa_eval", 0, 4)}, stage_type=pa.int64()),
        write_repo(root, "stage1_instruct_eval", "instruct_eval", {"val": rows("instruct_eval", 1, 3)},
                   stage_type=pa.int64()),  # one split only, as an early commit of the real one
    ]  # fmt: skip
    expected = {
        (3, "cqa", "train"): 5, (0, "csqa", "train"): 4 * 3, (3, "ir", "train"): 6,
        (3, "ir", "validation"): 2, (3, "ir", "test"): 3, (3, "cqa", "validation"): 4, (3, "cqa", "test"): 6,
        (0, "csqa", "validation"): 2, (0, "csqa", "test"): 4, (1, "ir", "validation"): 3,
    }  # fmt: skip
    return folders, expected


def test_every_card_layout_imports_with_the_right_counts_and_valid_records(tmp_path, release):
    folders, expected = release
    stats = import_release([(f, None) for f in folders], tmp_path / "out", system=SYSTEM)
    df = read_table(tmp_path / "out" / "records.parquet", RecordSchema)  # curll's own schema, validated
    got = df.groupby(["stage", "type", "split"]).size().to_dict()
    assert got == expected
    assert stats["by_stage_type_split"] == {f"{s}/{t}/{p}": n for (s, t, p), n in sorted(expected.items())}
    assert stats["records"] == len(df) == sum(expected.values()) and stats["skipped"] == {}
    assert df["record_id"].is_unique
    assert json.loads((tmp_path / "out" / "stats.json").read_text()) == stats


def test_each_file_keeps_the_split_its_name_gives_in_any_kind_of_repository(tmp_path):
    """The import converts what a folder holds: unlike split's draw, it sets nothing aside."""
    folder = write_repo(tmp_path / "hub", "stage2_cqa_eval", "cqa_eval",
                        {"train": rows("cqa_eval", 2, 3), "test": rows("cqa_eval", 2, 2)})  # fmt: skip
    stats = import_release([(folder, None)], tmp_path / "out", system=SYSTEM)
    assert stats["by_stage_type_split"] == {"2/cqa/train": 3, "2/cqa/test": 2}


def test_records_are_laid_out_as_curll_lays_out_its_own(tmp_path, release):
    folders, _ = release
    import_release([(f, None) for f in folders], tmp_path / "out", system=SYSTEM)
    df = pd.read_parquet(tmp_path / "out" / "records.parquet")
    cqa = df[(df["type"] == "cqa") & (df["split"] == "test")].iloc[0]
    system, user, assistant = turns_of(cqa["messages"])
    passage = user.split("\n\n")[0]
    assert system == SYSTEM and passage.startswith("Passage ") and assistant.startswith("Answer ")
    assert question_of("cqa", user, passage).startswith("Question ")  # evaluate reads the question back
    # the two questions of one eval passage (one id) share a unit, so they share a split
    ids = df[(df["type"] == "cqa") & (df["split"] != "train")].groupby("unit_id").size()
    assert (ids == 2).all()
    # csqa: one record per pair, all of a row in its unit, the indicator metadata carried over
    csqa = df[(df["type"] == "csqa") & (df["split"] == "train")]
    assert csqa.groupby("unit_id").size().tolist() == [3] * 4
    assert set(csqa["skill"]) == {"Maths"} and set(csqa["indicator"]) == {"Counts to 00"}
    ir = turns_of(df[(df["type"] == "ir") & (df["stage"] == 3)].iloc[0]["messages"])
    assert ir[1].startswith("Do thing") and ir[2].startswith("Answer")
    cqa_train = df[(df["type"] == "cqa") & (df["split"] == "train")]
    assert set(cqa_train["indicator"]) == {""}  # the cqa card has no indicator columns


def test_small_batches_give_the_same_records(tmp_path, release):
    folders, _ = release
    import_release([(f, None) for f in folders], tmp_path / "a", system=SYSTEM)
    import_release([(f, None) for f in folders], tmp_path / "b", system=SYSTEM, batch_rows=3)
    a = pq.read_table(tmp_path / "a" / "records.parquet")
    b = pq.read_table(tmp_path / "b" / "records.parquet")
    assert a.equals(b) and pq.ParquetFile(tmp_path / "b" / "records.parquet").num_row_groups > 3


def test_empty_answers_are_skipped_with_their_reason_and_all_empty_is_an_error(tmp_path):
    table = rows("cqa_eval", 2, 4)
    table[1]["response"] = " "
    table[2]["question"] = ""
    folder = write_repo(tmp_path, "stage2_cqa_eval", "cqa_eval", {"test": table})
    stats = import_release([(folder, None)], tmp_path / "out")
    assert stats["records"] == 2 and stats["skipped"] == {"empty answer": 1, "empty question": 1}
    skipped = pd.read_parquet(tmp_path / "out" / "skipped.parquet")
    assert skipped[["row", "reason"]].values.tolist() == [[1, "empty answer"], [2, "empty question"]]
    assert skipped["file"].tolist() == ["stage2_cqa_eval/data/test-00000-of-00001.parquet"] * 2
    empty = write_repo(
        tmp_path / "e", "stage2_cqa_eval", "cqa_eval", {"test": [{**r, "response": ""} for r in table]}
    )
    with pytest.raises(CurllError, match=r"kept no records \(empty answer 3, empty question 1\)"):
        import_release([(empty, None)], tmp_path / "none")
    assert not (tmp_path / "none").exists()


def _rewrite(path: Path, column: str, array: pa.Array) -> None:
    table = pq.read_table(path)
    pq.write_table(table.set_column(table.schema.get_field_index(column), column, array), path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("drop question", "field 'question': missing column"),
        ("stage float", "field 'stage': has type double, expected an integer or a string"),
        ("stage word", "row 1, field 'stage': stage 'three' is not a whole number"),
        ("stage other", "row 0, field 'stage': stage 4 in a folder named for stage 3"),
        ("response int", "field 'response': has type int64, expected a string"),
    ],
)
def test_a_bad_file_names_the_file_and_column_and_nothing_is_written(tmp_path, change, message):
    folder = write_repo(tmp_path, "stage3_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 3, 3)})
    path = folder / "data" / "test-00000-of-00001.parquet"
    n = 3
    if change == "drop question":
        pq.write_table(pq.read_table(path).drop_columns(["question"]), path)
    elif change == "stage float":
        _rewrite(path, "stage", pa.array([3.0] * n))
    elif change == "stage word":
        _rewrite(path, "stage", pa.array(["3", "three", "3"]))
    elif change == "stage other":
        _rewrite(path, "stage", pa.array(["4"] * n))
    else:
        _rewrite(path, "response", pa.array([1] * n))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "records.parquet").write_text("before")
    with pytest.raises(CurllError) as err:
        import_release([(folder, None)], tmp_path / "out")
    assert str(err.value).startswith(str(path)) and message in str(err.value)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["records.parquet"]
    assert (tmp_path / "out" / "records.parquet").read_text() == "before"


def test_folders_that_are_not_repositories_are_refused_by_name(tmp_path):
    odd = write_repo(tmp_path, "my_download", "cqa_eval", {"test": rows("cqa_eval", 2, 2)})
    with pytest.raises(CurllError, match=r"my_download: not a curll-hub repository folder.*KIND=PATH"):
        import_release([(odd, None)], tmp_path / "out")
    # named by the user instead, the stage from the rows
    assert parse_source(f"cqa_eval={odd}") == (odd, "cqa_eval")
    assert import_release([parse_source(f"cqa_eval={odd}")], tmp_path / "out")["by_stage_type_split"] == {
        "2/cqa/test": 2
    }
    named = write_repo(tmp_path, "stage2_cqa", "cqa", {"train": rows("cqa", 2, 2)})
    with pytest.raises(CurllError, match="named as a cqa repository but passed as csqa"):
        import_release([parse_source(f"csqa={named}")], tmp_path / "x")
    text = tmp_path / "stage0_train"
    (text / "data").mkdir(parents=True)
    with pytest.raises(CurllError, match="stage0_train: a stage<N>_train repository holds laid-out"):
        import_release([(text, None)], tmp_path / "x")
    empty = tmp_path / "stage4_cqa"
    empty.mkdir()
    with pytest.raises(CurllError, match="stage4_cqa: holds no data/"):
        import_release([(empty, None)], tmp_path / "x")
    bad_csqa = write_repo(tmp_path, "stage1_csqa", "csqa", {"train": rows("csqa", 1, 1)})
    path = bad_csqa / "data" / "train-00000-of-00001.parquet"
    _rewrite(path, "csqa", pa.array(["[{'answer': 'a', 'question': 'q'}]"]))
    with pytest.raises(CurllError, match="field 'csqa': has type string, expected a list of"):
        import_release([(bad_csqa, None)], tmp_path / "x")
    typed = pa.array([[{"answer": 5, "question": ["a", "b"]}]])  # the right shape, not text inside
    _rewrite(path, "csqa", typed)
    with pytest.raises(CurllError, match=r"field 'csqa': has type list<.*struct<answer: int64.*text structs"):
        import_release([(bad_csqa, None)], tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_data_in_a_format_not_read_beside_the_parquet_files_is_refused_not_left_out(tmp_path):
    repo = write_repo(tmp_path, "stage2_cqa", "cqa", {"train": rows("cqa", 2, 2)})
    (repo / "data" / "test.jsonl").write_text('{"context": "A cat.", "cqa": []}\n')
    with pytest.raises(CurllError, match=r"test.jsonl: not a data file curll reads"):
        import_release([(repo, None)], tmp_path / "x")
    assert not (tmp_path / "x").exists()
    (repo / "data" / "test.jsonl").unlink()
    (repo / "README.md").write_text("a card\n")  # the card beside data/ is no data file
    (repo / ".cache" / "huggingface").mkdir(parents=True)  # the download tool's: never read
    (repo / ".cache" / "huggingface" / "train-00000-of-00001.parquet.metadata").write_text("x")
    (repo / "dataset_infos.json").write_text("{}")  # the Hub's metadata: no rows
    assert import_release([(repo, None)], tmp_path / "x")["records"] == 2


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ("data/val.jsonl.gz", "not a data file curll reads"),  # compressed: its last suffix is .gz
        ("data/val-00000-of-00001.csv.zst", "not a data file curll reads"),
        ("data/dev-00000-of-00001.parquet", "not a data file curll reads"),  # a split curll has no name for
        ("data/default/val-00000-of-00001.parquet", "not a data file curll reads"),
        ("train.parquet", "a table file outside data/"),
        ("default/val/0000.parquet", "a table file outside data/"),  # the Hub's parquet-converter layout
        ("other/val-00000-of-00001.parquet", "a table file outside data/"),
        ("val.jsonl", "a table file outside data/"),
        ("train.json", "a table file outside data/"),
        ("data/validation-00000-of-00001.parquet", "val and validation files side by side"),
    ],
)
def test_rows_curll_would_not_read_refuse_the_folder_naming_the_file(tmp_path, where, said):
    repo = write_repo(tmp_path, "stage3_cqa_eval", "cqa_eval", {"val": rows("cqa_eval", 3, 2)})
    (repo / where).parent.mkdir(parents=True, exist_ok=True)
    source = repo / "data" / "val-00000-of-00001.parquet"
    (repo / where).write_bytes(source.read_bytes())
    with pytest.raises(CurllError, match=re.escape(said)) as err:
        import_release([(repo, None)], tmp_path / "x")
    assert err.value.file is not None and err.value.file.endswith(where.split("/")[-1])


def test_the_cards_configs_are_the_splits_the_hub_shows(tmp_path):
    """A card that reads a split from elsewhere is refused; a shard the card leaves out is one the
    Hub would not show; a card listing data/<split>-* is read."""
    repo = write_repo(tmp_path, "stage3_cqa_eval", "cqa_eval",
                      {"test": rows("cqa_eval", 3, 2), "val": rows("cqa_eval", 3, 1)})  # fmt: skip
    card = "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: data/test-*\n"
    card += "{}---\n"
    (repo / "README.md").write_text(card.format("  - split: val\n    path: other/val-*\n"))
    with pytest.raises(CurllError, match=r"README.md: the card's configs read 'other/val-\*' as val"):
        import_release([(repo, None)], tmp_path / "x")
    (repo / "README.md").write_text(card.format(""))
    with pytest.raises(CurllError, match=r"val-00000-of-00001.parquet: not in the card's configs \(test\)"):
        import_release([(repo, None)], tmp_path / "x")
    (repo / "README.md").write_text(card.format("  - split: val\n    path: [data/val-*]\n"))
    assert import_release([(repo, None)], tmp_path / "x")["records"] == 3
    mapped = (
        "---\nconfigs:\n- config_name: default\n  data_files:\n    test: data/test-*\n    val: other/*\n---\n"
    )
    (repo / "README.md").write_text(mapped)  # data_files as a mapping of split to path
    with pytest.raises(CurllError, match=r"the card's configs read 'other/\*' as val"):
        import_release([(repo, None)], tmp_path / "y")
    (repo / "README.md").write_text(mapped.replace("other/*", "data/val-*"))
    assert import_release([(repo, None)], tmp_path / "y")["records"] == 3


def test_an_empty_shard_of_null_columns_is_read_as_no_rows_and_dot_names_its_folder(tmp_path, monkeypatch):
    repo = write_repo(tmp_path, "stage3_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 3, 2)}, files=2)
    columns = pq.read_schema(repo / "data" / "test-00000-of-00002.parquet").names
    empty = pa.Table.from_pandas(pd.DataFrame(columns=columns), preserve_index=False)  # every column null
    pq.write_table(empty, repo / "data" / "test-00001-of-00002.parquet")
    monkeypatch.chdir(repo)
    assert import_release([(Path(), None)], tmp_path / "x")["records"] == 1  # the folder "."


def test_the_command_imports_and_exits_2_with_one_line_on_bad_input(tmp_path):
    folder = write_repo(tmp_path, "stage3_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 3, 4)})
    proc = curll("release", "import", "--layout", "curll-hub", "--out", "out", str(folder), cwd=tmp_path)
    assert "4 records -> out/records.parquet; 0 skipped" in proc.stderr
    system, _, _ = turns_of(pd.read_parquet(tmp_path / "out" / "records.parquet")["messages"][0])
    assert system == ""  # no params.yaml here and no --system
    bad = curll("release", "import", "--out", "o2", str(tmp_path / "nowhere"), cwd=tmp_path, check=False)
    assert bad.returncode == 2 and "nowhere: not a folder" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "o2").exists()
    table = rows("cqa_eval", 2, 3)
    table[2]["stage"] = "12"  # found while the rows are read, the progress bar begun
    row_bad = write_repo(tmp_path / "rows", "stage2_cqa_eval", "cqa_eval", {"test": table})
    bad = curll("release", "import", "--out", "o3", str(row_bad), cwd=tmp_path, check=False)
    assert bad.returncode == 2 and "stage 12 is above 9" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_two_stages_of_one_kind_give_distinct_records_and_a_folder_twice_is_refused(tmp_path):
    three = write_repo(tmp_path, "stage3_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 3, 4)})
    four = write_repo(tmp_path, "stage4_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 4, 4)})
    import_release([(three, None), (four, None)], tmp_path / "out")
    df = read_table(tmp_path / "out" / "records.parquet", RecordSchema)  # record_id unique
    assert df.groupby("stage").size().to_dict() == {3: 4, 4: 4}
    copy = tmp_path / "again"
    copy.mkdir()
    shutil.copytree(three, copy / "stage3_cqa_eval")
    with pytest.raises(CurllError, match="a second folder named 'stage3_cqa_eval'"):
        import_release([(three, None), (copy / "stage3_cqa_eval", None)], tmp_path / "x")
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("value", "message"),
    [("12", "stage 12 is above 9"), ("\u00b2", "not a whole number"), ("-1", "stage -1 is below 0")],
)
def test_a_stage_curll_cannot_hold_is_named_at_its_row(tmp_path, value, message):
    table = rows("cqa_eval", 2, 2)
    table[1]["stage"] = value
    folder = write_repo(tmp_path, "any_name", "cqa_eval", {"test": table})
    with pytest.raises(CurllError, match=message) as err:
        import_release([parse_source(f"cqa_eval={folder}")], tmp_path / "out")
    assert err.value.row == 1 and err.value.field == "stage"


def test_indicator_ids_match_an_import_of_the_same_cells_as_a_taxonomy(tmp_path):
    """The same indicator written in the authors' taxonomy CSV layout and, padded with stray
    white space, in a release row gets one indicator_id from both importers."""
    csv = tmp_path / "t.csv"
    csv.write_text(",Skills,Sub-skills,Goals,stage-1\n,Maths,Number,Count,Counts to 10\n")
    curll("taxonomy", "import", "--out", "tax", str(csv), cwd=tmp_path)
    expected = pd.read_parquet(tmp_path / "tax" / "indicators.parquet")["indicator_id"].tolist()
    table = rows("instruct_eval", 1, 2)
    for row in table:
        row.update(skill=" Maths", subskill="Number ", goal="Count", indicator="Counts  to\n10")
    folder = write_repo(tmp_path, "stage1_instruct_eval", "instruct_eval", {"val": table})
    import_release([(folder, None)], tmp_path / "out")
    got = pd.read_parquet(tmp_path / "out" / "records.parquet")
    assert set(got["indicator_id"]) == set(expected) and set(got["indicator"]) == {"Counts to 10"}


def test_rows_without_an_id_are_units_of_their_own(tmp_path):
    """A null ``id`` ties no questions together: each such row is its own unit (it used to hash
    as the text "None", so every id-less question, and a literal id "None", made one unit)."""
    table = rows("instruct_eval", 1, 4)
    for row, id_ in zip(table, [None, None, "None", "id9"], strict=True):
        row["id"] = id_
    folder = write_repo(tmp_path, "stage1_instruct_eval", "instruct_eval", {"test": table})
    import_release([(folder, None)], tmp_path / "out")
    got = pd.read_parquet(tmp_path / "out" / "records.parquet")
    assert got["unit_id"].nunique() == 4


def test_a_folder_named_for_a_stage_past_9_or_a_kind_curll_lacks_is_named_as_such(tmp_path):
    folder = write_repo(tmp_path, "stage12_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 2, 2)})
    with pytest.raises(
        CurllError, match=r"stage12_cqa_eval: named for stage 12, and curll's stages go 0..9$"
    ):
        import_release([(folder, None)], tmp_path / "out")
    with pytest.raises(CurllError, match=r"unknown KIND 'foo' in KIND=PATH; KIND is one of cqa, ") as err:
        parse_source(f"foo={folder}")
    assert err.value.file == str(folder)
    assert parse_source(f"cqa_eval={folder}") == (folder, "cqa_eval")
    odd = tmp_path / "a=b"
    odd.mkdir()
    assert parse_source(str(odd)) == (odd, None)  # a folder whose own name holds "="


def test_a_release_of_no_rows_names_its_folders(tmp_path):
    folder = write_repo(tmp_path, "stage2_cqa_eval", "cqa_eval", {"test": []})
    with pytest.raises(CurllError, match=r"kept no records \(no rows\)") as err:
        import_release([(folder, None)], tmp_path / "out")
    assert err.value.file == str(folder)


@pytest.mark.parametrize("moved", ["data/more/train-00000-of-00001.parquet", "data/more/test.jsonl",
                                   "data/test-00000-of-00001.PARQUET"])  # fmt: skip
def test_a_data_file_curll_would_not_read_is_named_not_left_out(tmp_path, moved):
    folder = write_repo(
        tmp_path, "stage0_cqa", "cqa", {"train": rows("cqa", 0, 5), "test": rows("cqa", 0, 5)}
    )
    (folder / moved).parent.mkdir(parents=True, exist_ok=True)
    (folder / "data" / "test-00000-of-00001.parquet").rename(folder / moved)
    with pytest.raises(CurllError) as err:
        import_release([(folder, None)], tmp_path / "out")
    assert err.value.file == str(folder / moved) and "\n" not in str(err.value)
    assert not (tmp_path / "out").exists()


def test_a_categorical_stage_and_text_of_another_arrow_layout_import_as_the_plain_file_does(tmp_path):
    plain = write_repo(tmp_path / "a", "stage2_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 2, 3)})
    other = write_repo(tmp_path / "b", "stage2_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 2, 3)})
    path = other / "data" / "test-00000-of-00001.parquet"
    table = pq.read_table(path)
    at = table.schema.get_field_index("stage")
    table = table.set_column(at, "stage", table.column("stage").cast(pa.string()).dictionary_encode())
    at = table.schema.get_field_index("question")
    table = table.set_column(at, "question", table.column("question").cast(pa.string_view()))
    pq.write_table(table, path)
    assert pa.types.is_dictionary(pq.read_schema(path).field("stage").type)
    import_release([(plain, None)], tmp_path / "plain")
    import_release([(other, None)], tmp_path / "other")
    want = pd.read_parquet(tmp_path / "plain" / "records.parquet").drop(columns=["source"], errors="ignore")
    got = pd.read_parquet(tmp_path / "other" / "records.parquet").drop(columns=["source"], errors="ignore")
    pd.testing.assert_frame_equal(got, want)


def test_a_csqa_column_with_no_list_in_any_cell_skips_each_row(tmp_path):
    table = rows("csqa", 0, 2)
    folder = write_repo(tmp_path, "stage0_csqa", "csqa", {"train": table})
    path = folder / "data" / "train-00000-of-00001.parquet"
    data = pq.read_table(path)
    at = data.schema.get_field_index("csqa")
    pq.write_table(data.set_column(at, "csqa", pa.nulls(len(data))), path)
    with pytest.raises(CurllError, match=r"kept no records \(no questions 2\)"):
        import_release([(folder, None)], tmp_path / "out")


def test_the_split_stages_draw_counts_no_question_in_a_csqa_column_of_nulls(tmp_path):
    from curll.imports.reader import open_source
    from curll.imports.sample import draw

    folder = write_repo(tmp_path, "stage0_csqa", "csqa", {"train": rows("csqa", 0, 2)})
    path = folder / "data" / "train-00000-of-00001.parquet"
    data = pq.read_table(path)
    pq.write_table(data.set_column(data.schema.get_field_index("csqa"), "csqa", pa.nulls(len(data))), path)
    plan = draw([open_source(folder, None)], {"train": 5, "validation": 1, "test": 1}, 0, ["csqa"])
    assert plan.available == {(0, "csqa", "train"): 0} and not plan.picks


def test_a_link_keeps_its_name_hidden_files_are_skipped_and_a_card_dash_run_is_no_fence(tmp_path):
    """A folder linked under its repository's name (the Hub cache's snapshot folder is named by
    a commit) is read by the link's name; ``.DS_Store`` in data/ is no data; a title holding
    ``---`` does not end the card's front matter, whose configs are then read."""
    real = write_repo(tmp_path / "snapshots", "abc123", "cqa_eval", {"test": rows("cqa_eval", 2, 2)})
    (real / "data" / ".DS_Store").write_bytes(b"\0Bud1")
    card = "---\npretty_name: stage 2 --- cqa\nconfigs:\n- config_name: default\n  data_files:\n"
    (real / "README.md").write_text(card + "  - split: test\n    path: other/test-*\n---\n")
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "stage2_cqa_eval").symlink_to(real, target_is_directory=True)
    with pytest.raises(CurllError, match=r"the card's configs read 'other/test-\*' as test"):
        import_release([(tmp_path / "links" / "stage2_cqa_eval", None)], tmp_path / "x")
    (real / "README.md").write_text(card + "  - split: test\n    path: data/test-*\n---\n")
    assert import_release([(tmp_path / "links" / "stage2_cqa_eval", None)], tmp_path / "x")["records"] == 2
