from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from curll.artifacts import atomic_dir, atomic_path, read_table, write_json, write_table, write_tables
from curll.errors import CurllError
from curll.schemas import WordSchema


def words(**over) -> pd.DataFrame:
    base = {
        "word": ["dog", "cat"],
        "pos": ["Noun", "Noun"],
        "aoa": [3.0, None],
        "perc_known": [1.0, None],
        "stage": [0, 0],
        "rank": [0, 1],
    }
    base.update(over)
    return pd.DataFrame(base).astype({"aoa": "float64", "perc_known": "float64"})


def test_round_trip(tmp_path):
    path = tmp_path / "w.parquet"
    write_table(words(), path, WordSchema)
    pd.testing.assert_frame_equal(read_table(path, WordSchema), words())
    assert [p.name for p in tmp_path.iterdir()] == ["w.parquet"]


def test_invalid_table_names_row_and_field_and_writes_nothing(tmp_path):
    path = tmp_path / "w.parquet"
    with pytest.raises(CurllError) as err:
        write_table(words(pos=["Noun", "Pronoun"]), path, WordSchema)
    assert (err.value.row, err.value.field) == (1, "pos")
    assert "Pronoun" in str(err.value) and str(path) in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_a_table_failing_in_many_places_is_one_line_naming_the_first_five_and_counting_the_rest(tmp_path):
    n = 8
    bad = words(word=[f"w{i}" for i in range(n)], pos=["Pronoun"] * n, aoa=[3.0] * n, perc_known=[1.0] * n,
                stage=[0] * n, rank=list(range(n)))  # fmt: skip
    with pytest.raises(CurllError) as err:
        write_table(bad, tmp_path / "w.parquet", WordSchema)
    text = str(err.value)
    assert "\n" not in text and text.count("failed isin") == 5 and text.endswith("; and 3 more")
    assert (err.value.row, err.value.field) == (0, "pos")


def test_unknown_or_missing_columns_are_refused(tmp_path):
    with pytest.raises(CurllError, match="extra"):
        write_table(words(extra=[1, 2]), tmp_path / "a.parquet", WordSchema)
    with pytest.raises(CurllError) as err:
        write_table(words().drop(columns=["rank"]), tmp_path / "b.parquet", WordSchema)
    assert err.value.field == "rank"


def test_crash_mid_write_keeps_previous_file(tmp_path):
    path = tmp_path / "w.parquet"
    write_table(words(), path, WordSchema)
    before = path.read_bytes()

    def crashing_writer(df: pd.DataFrame, tmp) -> None:
        tmp.write_bytes(b"half a parq")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_table(words(word=["emu", "owl"]), path, WordSchema, writer=crashing_writer)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["w.parquet"]


def test_atomic_path_and_json(tmp_path):
    target = tmp_path / "sub" / "m.json"
    write_json(target, {"b": 1, "a": 2})
    assert json.loads(target.read_text()) == {"a": 2, "b": 1}
    with pytest.raises(ValueError), atomic_path(target) as tmp:
        tmp.write_text("partial")
        raise ValueError
    assert json.loads(target.read_text()) == {"a": 2, "b": 1}


def test_read_errors(tmp_path):
    with pytest.raises(CurllError, match="not found"):
        read_table(tmp_path / "missing.parquet", WordSchema)
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(CurllError, match="not a readable parquet"):
        read_table(bad, WordSchema)


def test_multi_column_uniqueness_names_the_fields(tmp_path):
    with pytest.raises(CurllError, match="multiple_fields_uniqueness") as err:
        write_table(words(word=["dog", "dog"]), tmp_path / "w.parquet", WordSchema)
    assert err.value.row == 0 and err.value.field in {"stage", "word", "pos"}


def test_an_empty_table_is_written_with_the_schema_types(tmp_path):
    """An empty shard is a valid table: pandas' object columns are no type error."""
    empty = pd.DataFrame(columns=list(WordSchema.to_schema().columns))
    write_table(empty, tmp_path / "e.parquet", WordSchema)
    back = read_table(tmp_path / "e.parquet", WordSchema)
    assert back.empty and list(back.columns) == list(empty.columns)


def test_several_outputs_are_all_or_nothing(tmp_path):
    """A stage with several tables used to write them one by one: a schema failure in the
    last left the first ones replaced."""
    first, second, third = tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "c.parquet"
    write_table(words(), first, WordSchema)
    before = first.read_bytes()
    bad = words(pos=["Noun", "Spoon"])
    with pytest.raises(CurllError, match="pos") as err:
        write_tables([(words(word=["emu", "owl"]), first, WordSchema), (words(), second, WordSchema),
                      (bad, third, WordSchema)])  # fmt: skip
    assert str(third) in str(err.value)
    assert first.read_bytes() == before and not second.exists() and not third.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.parquet"]  # no temp file left
    write_tables([(words(word=["emu", "owl"]), first, WordSchema), (words(), second, WordSchema)])
    assert read_table(first, WordSchema)["word"].tolist() == ["emu", "owl"] and second.exists()


def test_outputs_respect_the_umask_not_mkstemps_0600(tmp_path):
    """Shards written on a shared folder must be readable by the other machines' users."""
    import os
    import stat

    from curll.artifacts import atomic_dir

    old = os.umask(0o002)
    try:
        write_table(words(), tmp_path / "w.parquet", WordSchema)
        with atomic_dir(tmp_path / "folder") as tmp:
            (tmp / "x").write_text("x")
            (tmp / "x").chmod(0o600)  # as safetensors writes its files
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "w.parquet").stat().st_mode) == 0o664
    assert stat.S_IMODE((tmp_path / "folder").stat().st_mode) == 0o775
    assert stat.S_IMODE((tmp_path / "folder" / "x").stat().st_mode) == 0o664


def test_an_output_path_that_is_a_folder_is_named(tmp_path):
    (tmp_path / "w.parquet").mkdir()
    with pytest.raises(CurllError, match=r"w.parquet: is a folder; expected a file path"):
        write_table(words(), tmp_path / "w.parquet", WordSchema)


@pytest.fixture
def small_disk(tmp_path):
    """A 256 KiB tmpfs (needs root and mount rights; skipped elsewhere)."""
    import subprocess

    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:  # fmt: skip
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_is_a_clear_error_and_the_earlier_output_stays(small_disk):
    path = small_disk / "w.parquet"
    write_table(words(), path, WordSchema)
    before = path.read_bytes()
    n = 60_000  # ~1 MB of parquet: more than the disk holds
    big = words(word=[f"w{i}x{i * 7919}" for i in range(n)], pos=["Noun"] * n, aoa=[3.0] * n,
                perc_known=[1.0] * n, stage=[0] * n, rank=list(range(n)))  # fmt: skip
    with pytest.raises(CurllError, match=r"w.parquet: cannot write: No space left on device"):
        write_table(big, path, WordSchema)
    assert path.read_bytes() == before
    assert [p.name for p in small_disk.iterdir()] == ["w.parquet"]  # no temporary left behind


def test_a_read_only_folder_is_a_clear_error_and_the_earlier_output_stays(small_disk):
    import subprocess

    path = small_disk / "w.parquet"
    write_table(words(), path, WordSchema)
    before = path.read_bytes()
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    with pytest.raises(CurllError, match=r"w.parquet: cannot write: Read-only file system"):
        write_table(words(word=["sun", "moon"]), path, WordSchema)
    assert path.read_bytes() == before


def test_a_streamed_table_is_all_or_nothing(tmp_path):
    from curll.streaming import write_table_stream

    path = tmp_path / "w.parquet"
    write_table(words(), path, WordSchema)
    before = path.read_bytes()
    chunks = iter([words(word=["sun", "moon"]), words(stage=[0, 10])])  # the second: stage out of range
    with pytest.raises(CurllError, match=r"w.parquet, row 1, field 'stage'"):
        write_table_stream(chunks, path, WordSchema)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["w.parquet"]
    assert write_table_stream(iter([words(), words(word=["sun", "moon"])]), path, WordSchema) == 4
    assert read_table(path, WordSchema)["word"].tolist() == ["dog", "cat", "sun", "moon"]


def test_a_killed_writers_temporaries_are_cleared_and_a_live_ones_kept(tmp_path):
    """SIGKILL leaves ``.<name>.<pid>-<random>.tmp`` behind; the next write of that name removes it
    when the pid is gone (above the kernel's pid_max here), never a running writer's."""
    dead = tmp_path / ".words.parquet.99999999-abc_1234.tmp"
    dead.write_text("half")
    dead_dir = tmp_path / ".model.99999999-abcd1234.tmp"
    (dead_dir / "inner").mkdir(parents=True)
    live = tmp_path / f".words.parquet.{os.getppid()}-xyz12345.tmp"
    live.write_text("busy")
    other = tmp_path / ".words.parquet.b.99999999-abcd1234.tmp"  # another output's name
    other.write_text("not ours")
    dated = tmp_path / ".model.2024-05-01.json.99999999-abcd1234.tmp"  # not pid 2024's: another output's
    dated.write_text("not ours either")
    write_table(words(), tmp_path / "words.parquet", WordSchema)
    with atomic_dir(tmp_path / "model") as tmp:
        (tmp / "f").write_text("x")
    assert not dead.exists() and not dead_dir.exists()
    assert live.read_text() == "busy" and other.read_text() == "not ours" and dated.exists()


def test_a_folder_that_cannot_be_made_is_named(tmp_path):
    (tmp_path / "afile").write_text("x")
    under_a_file = tmp_path / "afile" / "out"
    with pytest.raises(CurllError, match=r"afile/out: cannot write here: .*afile"), atomic_dir(under_a_file):
        pass


@pytest.mark.parametrize("failing", ["table", "stats"])
def test_a_full_disk_names_the_file_that_could_not_be_written(tmp_path, monkeypatch, failing):
    import errno

    from curll.artifacts import write_table_and_stats

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if failing == "table":
        monkeypatch.setattr(pd.DataFrame, "to_parquet", full)
    else:
        monkeypatch.setattr("pathlib.Path.write_text", full)
    table, stats = tmp_path / "words.parquet", tmp_path / "stats.json"
    with pytest.raises(CurllError, match="No space left on device") as err:
        write_table_and_stats(words(), table, WordSchema, stats, {"n": 1})
    assert err.value.file == str(table if failing == "table" else stats)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # neither written, no temporary left
