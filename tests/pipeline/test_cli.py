from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from curll.yamlio import dump_yaml, load_yaml
from harness.commands import curll
from pipeline.tools.cli import FOREACH, STAGES, main

ROOT = Path(__file__).resolve().parents[2]
CSV = ",Skills,Sub-skills,Goals,stage-1\n,Maths,Number,Count,Counts to 10\n,,,,Adds within 5\n"


def curll_here(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``curll ARGS`` in this process: :func:`pipeline.tools.cli.main`, which the console script
    calls, run in ``cwd`` with its stdout and stderr captured; its status is the returncode. For
    many checks of what a command prints on bad input, without a new process (about a second)
    each; :func:`curll` is the command as a user runs it."""
    out, err = io.StringIO(), io.StringIO()
    before = (Path.cwd(), sys.argv)
    status: int = 0
    try:
        os.chdir(cwd)
        sys.argv = ["curll", *args]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("default")  # printed on stderr, as the command's would be
            warnings.showwarning = _warning_to(err)
            try:
                main()
            except SystemExit as stop:  # as Python ends: None is 0, an int itself, else 1
                status = 0 if stop.code is None else stop.code if isinstance(stop.code, int) else 1
    finally:
        os.chdir(before[0])
        sys.argv = before[1]
    return subprocess.CompletedProcess(["curll", *args], status, out.getvalue(), err.getvalue())


def _warning_to(stream: Any) -> Any:
    """A ``warnings.showwarning`` that writes each warning to ``stream``, as Python prints it."""

    def show(
        message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None
    ) -> None:
        stream.write(warnings.formatwarning(message, category, filename, lineno, line))

    return show


def test_help_lists_every_dvc_stage_and_each_stage_is_a_curll_command(tmp_path):
    dvc_stages = load_yaml(ROOT / "dvc.yaml")["stages"]
    assert list(dvc_stages) == list(STAGES)
    help_text = curll("--help", cwd=tmp_path).stdout
    for name, stage in dvc_stages.items():
        assert name in help_text
        if name in FOREACH:  # one DVC stage per item (a list's item, a mapping's key), the command naming it
            item = "${key}" if stage["foreach"] == "${llm.profiles}" else "${item}"
            assert stage["do"]["cmd"] == f"curll {name} run {FOREACH[name][0]} {item}"
        else:
            assert stage["cmd"] == f"curll {name} run"
        assert (ROOT / "pipeline" / f"{name}.py").is_file()


def test_taxonomy_import_writes_table_and_stats(tmp_path, write):
    src = write("t.csv", CSV)
    curll(
        "taxonomy", "import", "--layout", "curll-csv", "--out", str(tmp_path / "out"), str(src), cwd=tmp_path
    )
    df = pd.read_parquet(tmp_path / "out" / "indicators.parquet")
    assert df["indicator"].tolist() == ["Counts to 10", "Adds within 5"]
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    one = {"skills": 1, "subskills": 1, "goals": 1, "indicators": 2, "duplicates_dropped": 0}
    assert stats == {"stages": {"1": one}, "duplicates_dropped": 0}


def test_failed_import_exits_nonzero_names_the_place_and_writes_nothing(tmp_path, write):
    src = write("t.csv", CSV + ",,,,Adds within 5\n")
    proc = curll("taxonomy", "import", "--out", str(tmp_path / "out"), str(src), cwd=tmp_path, check=False)
    assert proc.returncode == 2
    assert "t.csv" in proc.stderr and "row 4" in proc.stderr and "duplicate indicator" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_import_drops_a_repeat_when_asked_and_reads_a_curriculum_of_your_own(tmp_path, write):
    src = write("t.csv", CSV + ",,,,Adds within 5\n")
    proc = curll(
        "taxonomy", "import", "--duplicates", "drop", "--out", str(tmp_path / "d"), str(src), cwd=tmp_path
    )
    assert "t.csv, row 4, field 'stage-1': dropped a repeat of row 3" in proc.stderr
    assert json.loads((tmp_path / "d" / "stats.json").read_text())["duplicates_dropped"] == 1
    example = ROOT / "examples" / "my_curriculum.csv"  # the worked example of docs/data.md, as it shows it
    columns = "skill=Subject,subskill=Strand,goal=Learning goal,indicator=Can do,grade=Grade"
    args = ["--layout", "table", "--columns", columns, "--grades", "K=0,1=1,2=2,3=3"]
    curll("taxonomy", "import", *args, "--out", str(tmp_path / "t"), str(example), cwd=tmp_path)
    stats = json.loads((tmp_path / "t" / "stats.json").read_text())
    assert {s: c["indicators"] for s, c in stats["stages"].items()} == {"0": 3, "1": 6, "2": 4, "3": 1}
    bad = curll("taxonomy", "import", *args[:-1], "K=0,1=one", "--out", str(tmp_path / "x"), str(example),
                cwd=tmp_path, check=False)  # fmt: skip
    assert bad.returncode == 2 and "--grades" in bad.stderr and "'1=one'" in bad.stderr


def test_vocab_import_caps_each_stage(tmp_path, write):
    rows = "".join(f"w{i},Noun,w{i},{3 + (i % 2) * 2.5},1.0\n" for i in range(40))
    src = write("aoa.csv", "Word,Dom_PoS_SUBTLEX,Lemma_highest_PoS,AoA_Kup_lem,Perc_known_lem\n" + rows)
    out = tmp_path / "v"
    curll(
        "vocab",
        "import",
        "--format",
        "kuperman",
        "--out",
        str(out),
        "--max-per-stage",
        "7",
        "--stages",
        "0-1",
        str(src),
        cwd=tmp_path,
    )
    stats = json.loads((out / "stats.json").read_text())
    assert stats == {"stages": {"0": {"words": 7}, "1": {"words": 7}}}
    assert len(pd.read_parquet(out / "words.parquet")) == 14
    # the default stages 0-4: three of them get no word from this file, which is refused
    empty = curll("vocab", "import", "--format", "kuperman", "--out", str(tmp_path / "e"), str(src),
                  cwd=tmp_path, check=False)  # fmt: skip
    assert empty.returncode == 2 and len(empty.stderr.strip().splitlines()) == 1, empty.stderr
    assert "aoa.csv, field '--stages': no word for stage(s) [2, 3, 4]" in empty.stderr
    assert not (tmp_path / "e").exists()


def _params(tmp_path: Path, **vocab_over) -> Path:
    data = load_yaml(ROOT / "params.yaml")
    for section in ("taxonomy", "vocab"):
        data[section]["input"] = str(ROOT / data[section]["input"])
    data["vocab"].update(vocab_over)
    path = tmp_path / "params.yaml"
    dump_yaml(data, path)
    return path


def test_a_usage_error_is_one_line_naming_the_commands_help_and_a_bare_group_prints_its_help(tmp_path):
    for args, says in [
        (["vocab", "import"], "error: Missing argument 'file'. (see curll vocab import --help)"),
        (["vocab", "import", "--max-per-stage", "abc", "x.csv"], "Invalid value for '--max-per-stage'"),
        (["nosuch"], "error: No such command 'nosuch'. (see curll --help)"),
        (["vocab", "import", "--bogus", "x"], "No such option: --bogus"),
    ]:
        proc = curll(*args, cwd=tmp_path, check=False)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, (args, proc.stderr)
        assert says in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
    bare = curll("vocab", cwd=tmp_path, check=False)
    assert bare.returncode == 2 and "import" in bare.stdout and not bare.stderr.strip()
    assert curll("--help", cwd=tmp_path).returncode == 0


def test_stage_run_reads_params_and_writes_declared_outputs(tmp_path):
    _params(tmp_path, max_per_stage=3)
    curll("vocab", "run", cwd=tmp_path)
    curll("taxonomy", "run", cwd=tmp_path)
    words = pd.read_parquet(tmp_path / "data" / "vocab" / "words.parquet")
    assert words.groupby("stage").size().tolist() == [3, 3, 3, 3, 3]
    assert (tmp_path / "data" / "taxonomy" / "indicators.parquet").is_file()


def test_bad_param_stops_the_stage_naming_the_key(tmp_path):
    _params(tmp_path, max_per_stage=-5)
    proc = curll("vocab", "run", cwd=tmp_path, check=False)
    assert proc.returncode == 2
    assert "vocab.max_per_stage" in proc.stderr and "params.yaml" in proc.stderr
    assert not (tmp_path / "data").exists()


def test_a_stage_the_taxonomy_file_lacks_is_named_with_the_file_and_the_params_key(tmp_path):
    path = _params(tmp_path, stages=[0, 1, 2, 3, 4, 5])
    data = load_yaml(path)
    data["taxonomy"]["stages"] = [0, 1, 2, 3, 4, 5]
    dump_yaml(data, path)
    proc = curll("taxonomy", "run", cwd=tmp_path, check=False)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "taxonomy_builtin.yaml, field 'taxonomy.stages': no indicator for stage(s) [5]" in proc.stderr
    assert not (tmp_path / "data").exists()


def test_a_vocab_stage_the_word_list_lacks_is_named_with_the_file_and_the_params_key(tmp_path):
    _params(tmp_path, stages=[0, 1, 2, 3, 4, 5])  # a superset of the taxonomy's stages is allowed
    proc = curll("vocab", "run", cwd=tmp_path, check=False)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "vocab_builtin.csv, field 'vocab.stages': no word for stage(s) [5]" in proc.stderr
    assert "the list gives no word of its stage" in proc.stderr and not (tmp_path / "data").exists()


def test_a_token_budget_too_small_stops_every_stage_before_it_starts(tmp_path):
    """Budgets are checked by the command, not by the params loader (which every stage imports):
    even a stage with no LLM task refuses params whose LLM tasks cannot close their answers."""
    path = _params(tmp_path)
    data = load_yaml(path)
    data["llm"]["profiles"][data["llm"]["use"]]["sampling"]["max_tokens"] = 8
    dump_yaml(data, path)
    proc = curll("vocab", "run", cwd=tmp_path, check=False)
    assert proc.returncode == 2
    assert f"llm.profiles.{data['llm']['use']}.max_chars" in proc.stderr and "max_tokens 8" in proc.stderr
    assert not (tmp_path / "data").exists()


def test_vocab_import_follows_the_authors_dedup_when_asked(tmp_path, write):
    rows = "anybodies,Noun,anybody,4.0,0.9\nanybody,Pronoun,anybody,4.0,0.95\n"
    src = write("aoa.csv", "Word,Dom_PoS_SUBTLEX,Lemma_highest_PoS,AoA_Kup_lem,Perc_known_lem\n" + rows)
    curll("vocab", "import", "--dedup", "first_row", "--stages", "0", "--out", str(tmp_path / "v"), str(src),
          cwd=tmp_path)  # fmt: skip
    words = pd.read_parquet(tmp_path / "v" / "words.parquet")
    assert words[["word", "pos"]].values.tolist() == [["anybody", "Noun"]]  # the first row's tag
    bad = curll(
        "vocab",
        "import",
        "--dedup",
        "last",
        "--out",
        str(tmp_path / "w"),
        str(src),
        cwd=tmp_path,
        check=False,
    )
    assert bad.returncode == 2 and "--dedup" in bad.stderr


def test_import_options_that_cannot_mean_what_they_say_are_refused_on_one_line(tmp_path, write):
    src = write("t.csv", CSV)
    header = "Word,Dom_PoS_SUBTLEX,Lemma_highest_PoS,AoA_Kup_lem,Perc_known_lem\n"
    aoa = write("aoa.csv", header + "cat,Noun,cat,3,1\n")
    table = ["--layout", "table", "--columns", "skill=Skills,goal=Goals,indicator=stage-1,grade=Sub-skills"]
    for args, says in [
        (["taxonomy", "import", "--stages", "4-0", str(src)], "field '--stages': expected stages like"),
        (["taxonomy", "import", "--stages", "0-", str(src)], "field '--stages': expected stages like"),
        (["vocab", "import", "--stages", "4-0", str(aoa)], "field '--stages': expected stages like"),
        (["vocab", "import", "--stages", "0-20", str(aoa)], "field '--stages': stages go 0..9, got '0-20'"),
        (["vocab", "import", "--seed", "-1", str(aoa)], "field '--seed': must be 0..4294967295, got -1"),
        (
            ["taxonomy", "import", *table, "--grades", "K=0,k=1", str(src)],
            "field '--grades': grades 'K' and 'k' differ only in case",
        ),
        # the library's own argument names are given as the command's options
        (
            ["taxonomy", "import", "--columns", "skill=Skills,goal=Goals", str(src)],
            "field '--layout': --columns and --grades go with --layout table, not 'curll-csv'",
        ),
        (["taxonomy", "import", "--layout", "table", str(src)], "field '--columns': the table layout needs"),
        (
            [
                "taxonomy",
                "import",
                "--layout",
                "table",
                "--columns",
                "skill=Nope,goal=Goals",
                "--grades",
                "K=0",
                str(src),
            ],
            "field 'Nope': no column 'Nope' (--columns skill); the header has",
        ),
        (
            ["taxonomy", "import", *table, "--grades", "K=0", str(src)],
            "grade 'Number' is not in --grades ['K']",
        ),
        (
            ["taxonomy", "import", "--stages", "1-2", str(src)],
            "t.csv, field '--stages': no indicator for stage(s) [2] of the stages asked for [1, 2]; "
            "the input has stage(s) [1]",
        ),
        (
            ["vocab", "import", "--format", "nope", str(aoa)],
            "field '--format': unknown vocabulary format 'nope'",
        ),
        (
            ["vocab", "import", "--max-per-stage", "-1", "--stages", "0", str(aoa)],
            "field '--max-per-stage': must be >= 0",
        ),
        (
            ["vocab", "import", str(aoa)],
            "aoa.csv, field '--stages': no word for stage(s) [1, 2, 3, 4] (of [0, 1, 2, 3, 4] asked for)",
        ),
        (
            ["taxonomy", "import", *table, "--grades", "K=0,1=1,K=1", str(src)],
            "field '--grades': 'K' is given twice",
        ),
        (
            ["taxonomy", "import", *table, "--grades", "K=0,3=12", str(src)],
            "field '--grades': grade '3' maps to stage 12; stages go 0..9",
        ),
    ]:
        proc = curll_here(*args, "--out", str(tmp_path / "o"), cwd=tmp_path)
        assert proc.returncode == 2 and says in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "o").exists()
    (tmp_path / "o" / "stats.json").mkdir(parents=True)  # the stats cannot be written: neither is the table
    proc = curll("taxonomy", "import", "--out", str(tmp_path / "o"), str(src), cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "stats.json: is a folder" in proc.stderr
    assert [p.name for p in (tmp_path / "o").iterdir()] == ["stats.json"]
