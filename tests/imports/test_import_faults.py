"""``curll release import`` on what a real download can hold and on a kill: partial or mixed shard
sets, undecodable files, empty passages, an ``--out`` that is not the import's own, a resume."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curll.errors import CurllError
from curll.imports import import_release, importer
from harness.commands import curll
from harness.hub_files import COLUMNS, rows, write_repo
from harness.kill import kill_when, leftovers


def _table(kind: str, records: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(records, schema=pa.schema(COLUMNS[kind]))


def test_a_split_must_be_every_shard_its_file_names_count(tmp_path):
    folder = write_repo(tmp_path, "stage3_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 3, 6)}, files=3)
    data = folder / "data"
    (data / "test-00001-of-00003.parquet").unlink()  # an interrupted download
    with pytest.raises(CurllError, match=r"data: test is not the 3 shards .*: missing shard 00001"):
        import_release([(folder, None)], tmp_path / "out")
    for f in data.iterdir():
        f.unlink()
    pq.write_table(_table("cqa_eval", rows("cqa_eval", 3, 2)), data / "test-00000-of-00001.parquet")
    pq.write_table(_table("cqa_eval", rows("cqa_eval", 3, 2)), data / "test-00000-of-00002.parquet")
    pq.write_table(_table("cqa_eval", rows("cqa_eval", 3, 2)), data / "test-00001-of-00002.parquet")
    with pytest.raises(CurllError, match=r"test files of 1 and of 2 shards mixed"):
        import_release([(folder, None)], tmp_path / "out")
    # older `datasets` releases name shards with a fingerprint; two revisions then share an index
    for f in data.iterdir():
        f.unlink()
    table = _table("cqa_eval", rows("cqa_eval", 3, 2))
    pq.write_table(table, data / "test-00000-of-00001-0123456789abcdef.parquet")
    assert import_release([(folder, None)], tmp_path / "out")["records"] == 2
    pq.write_table(table, data / "test-00000-of-00001-fedcba9876543210.parquet")
    with pytest.raises(CurllError, match=r"test is not the 1 shards .*: shard 00000 twice"):
        import_release([(folder, None)], tmp_path / "again")
    assert not (tmp_path / "again").exists()


def test_an_empty_passage_or_a_null_pair_is_skipped_with_its_reason(tmp_path):
    table = rows("cqa_eval", 3, 4)
    table[0]["context"], table[1]["context"] = "", "  "  # both questions of id0
    cqa = write_repo(tmp_path, "stage3_cqa_eval", "cqa_eval", {"test": table})
    csqa_rows = rows("csqa", 0, 2, pairs=2)
    csqa_rows[0]["csqa"] = [None, csqa_rows[0]["csqa"][1]]
    csqa = write_repo(tmp_path, "stage0_csqa", "csqa", {"train": csqa_rows})
    stats = import_release([(cqa, None), (csqa, None)], tmp_path / "out")
    assert stats["skipped"] == {"empty passage": 2, "empty question": 1}
    assert stats["by_stage_type_split"] == {"0/csqa/train": 3, "3/cqa/test": 2}
    skipped = pd.read_parquet(tmp_path / "out" / "skipped.parquet")
    assert skipped[["row", "pair", "reason"]].values.tolist() == [
        [0, 0, "empty passage"], [1, 0, "empty passage"], [0, 0, "empty question"]
    ]  # fmt: skip


def test_a_file_that_cannot_be_decoded_is_named_and_out_is_kept(tmp_path):
    folder = write_repo(tmp_path, "stage3_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 3, 400)})
    path = folder / "data" / "test-00000-of-00001.parquet"
    import_release([(folder, None)], tmp_path / "out")
    before = (tmp_path / "out" / "records.parquet").read_bytes()
    good = path.read_bytes()
    page = bytearray(good)  # the pages overwritten, the footer (schema, row counts) intact
    page[8 : len(page) // 2] = b"\xab" * (len(page) // 2 - 8)
    path.write_bytes(bytes(page))
    with pytest.raises(CurllError, match=rf"^{path}: cannot be read: \w+"):
        import_release([(folder, None)], tmp_path / "out")
    table = pq.read_table(pa.BufferReader(good))
    at = table.schema.get_field_index("question")
    raw = pa.array([b"bad \xff?"] * len(table), pa.binary())
    bad = pa.Array.from_buffers(pa.string(), len(table), raw.buffers())  # not validated as UTF-8
    pq.write_table(table.set_column(at, "question", bad), path)
    with pytest.raises(CurllError, match=rf"^{path}: cannot be read: .*utf-8"):
        import_release([(folder, None)], tmp_path / "out")
    pq.write_table(table.append_column("question", table.column("question")), path)
    with pytest.raises(CurllError, match=r"field 'question': the column appears twice"):
        import_release([(folder, None)], tmp_path / "out")
    assert (tmp_path / "out" / "records.parquet").read_bytes() == before


def test_out_is_refused_when_it_holds_a_source_or_files_of_its_own(tmp_path):
    hub = tmp_path / "hub"
    folder = write_repo(hub, "stage3_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 3, 4)})
    for out in (folder, hub, folder / "data", tmp_path):
        with pytest.raises(CurllError, match=r"would replace .*stage3_cqa_eval, a repository being imported"):
            import_release([(folder, None)], out)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "thesis.tex").write_text("years of work")
    with pytest.raises(CurllError, match=r"docs, field '--out': holds files an import did not write \(th"):
        import_release([(folder, None)], docs)
    assert (docs / "thesis.tex").read_text() == "years of work" and sorted(folder.rglob("*.parquet"))
    assert import_release([(folder, None)], tmp_path / "new")["records"] == 4  # new, then an earlier import
    assert import_release([(folder, None)], tmp_path / "new")["records"] == 4
    for out in (".", "hub/stage3_cqa_eval/README.md/out"):
        proc = curll("release", "import", "--out", out, "hub/stage3_cqa_eval", cwd=tmp_path, check=False)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    missing = curll("release", "import", "--params", "typo.yaml", "--out", "o", "hub/stage3_cqa_eval",
                    cwd=tmp_path, check=False)  # fmt: skip
    assert missing.returncode == 2 and "typo.yaml, field '--params': no such params file" in missing.stderr


def test_a_killed_import_resumes_from_the_files_it_finished(tmp_path, monkeypatch):
    """SIGKILL once the first of four files is done; the rerun reads the other three only and
    writes what an import never killed writes."""
    big = rows("cqa_eval", 3, 40_000)
    for r in big[::97]:
        r["context"] = ""  # skipped rows too: their file and counts must survive the resume
    hub = tmp_path / "hub"
    folder = write_repo(hub, "stage3_cqa_eval", "cqa_eval", {"test": big}, files=4)
    work = tmp_path / ".out.import"
    args = ["pipeline.tools.cli", "release", "import", "--out", "out", "hub/stage3_cqa_eval"]
    assert kill_when(args, tmp_path, lambda: any(work.glob("*.json"))), "finished before the kill"
    assert not (tmp_path / "out").exists()
    read: list[str] = []
    real = importer.rows  # type: ignore[attr-defined]

    def counted(path, *a, **k):
        read.append(path.name)
        return ROWS(path, *a, **k)

    monkeypatch.setattr(importer, "rows", counted)
    stats = import_release([(folder, None)], tmp_path / "out")
    empty = len(big[::97])
    assert stats["records"] == len(big) - empty and stats["skipped"] == {"empty passage": empty}
    assert len(read) < 4 and "test-00000-of-00004.parquet" not in read
    monkeypatch.setattr(importer, "rows", real)
    import_release([(folder, None)], tmp_path / "whole")
    for name in importer.OUTPUTS:
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    assert not work.exists() and leftovers(tmp_path) == []


class CrashError(Exception):
    pass


ROWS = importer.rows  # type: ignore[attr-defined]  # the real reader, before any test wraps it


def _crashing(monkeypatch, after: int) -> list[str]:
    """``importer.rows`` raising once ``after`` files are read whole; the names of the files read."""
    read: list[str] = []

    def rows_(path, *a, **k):
        if len(read) == after:
            raise CrashError(path)
        read.append(path.name)
        return ROWS(path, *a, **k)

    monkeypatch.setattr(importer, "rows", rows_)
    return read


def test_a_part_is_reused_only_while_its_file_its_system_turn_and_its_bytes_hold(tmp_path, monkeypatch):
    folder = write_repo(tmp_path / "hub", "stage3_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 3, 8)},
                        files=2)  # fmt: skip
    first = folder / "data" / "test-00000-of-00002.parquet"
    work = tmp_path / ".out.import"

    def crash_after_the_first_file(system: str = "") -> None:
        _crashing(monkeypatch, after=1)
        with pytest.raises(CrashError):
            import_release([(folder, None)], tmp_path / "out", system=system)
        assert len(list(work.glob("*.json"))) >= 1

    def rerun(system: str = "") -> tuple[list[str], pd.DataFrame]:
        read = _crashing(monkeypatch, after=99)
        import_release([(folder, None)], tmp_path / "out", system=system)
        return read, pd.read_parquet(tmp_path / "out" / "records.parquet")

    crash_after_the_first_file()
    read, _ = rerun()
    assert read == ["test-00001-of-00002.parquet"]  # the first file's part was reused
    crash_after_the_first_file()
    read, df = rerun(system="Be kind.")  # another system turn: every record changes
    assert len(read) == 2 and all("Be kind." in m for m in df["messages"])
    crash_after_the_first_file()
    table = pq.read_table(first)
    at = table.schema.get_field_index("question")
    pq.write_table(table.set_column(at, "question", pa.array(["Changed?"] * len(table))), first)
    read, df = rerun()  # the file changed since its part was made
    assert len(read) == 2 and sum("Changed?" in m for m in df["messages"]) == len(table)
    crash_after_the_first_file()
    (done,) = work.glob("*.json")
    part = done.with_name(done.name.replace(".json", ".records.parquet"))  # the finished part, torn
    part.write_bytes(part.read_bytes()[: len(part.read_bytes()) // 2])
    read, df = rerun()
    assert len(read) == 2 and len(df) == 8


def test_a_second_import_into_the_same_out_is_refused_while_one_runs(tmp_path):
    import fcntl
    import os

    folder = write_repo(tmp_path, "stage3_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 3, 4)})
    work = tmp_path / ".out.import"
    work.mkdir()
    fd = os.open(work, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a running import holds it
        with pytest.raises(CurllError, match=r"out, field '--out': another import into it is running"):
            import_release([(folder, None)], tmp_path / "out")
    finally:
        os.close(fd)
    assert import_release([(folder, None)], tmp_path / "out")["records"] == 4


def test_a_file_that_fails_half_way_leaves_no_part_of_itself_and_the_finished_files_stay(tmp_path):
    good = write_repo(tmp_path / "hub", "stage2_cqa_eval", "cqa_eval", {"test": rows("cqa_eval", 2, 40)})
    table = rows("cqa_eval", 3, 400)
    table[-1]["stage"] = "three"  # found after several row groups were written
    bad = write_repo(tmp_path / "hub", "stage3_cqa_eval", "cqa_eval", {"test": table})
    with pytest.raises(CurllError, match="stage 'three' is not a whole number"):
        import_release([(good, None), (bad, None)], tmp_path / "out", batch_rows=64)
    work = tmp_path / ".out.import"
    parts = sorted(p.suffix for p in work.iterdir())
    assert parts == [".json", ".parquet", ".parquet"], parts  # the good file's part, to reuse; no half
    assert not (tmp_path / "out").exists()
