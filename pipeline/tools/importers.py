"""Public importers: ``curll taxonomy import``, ``curll vocab import`` and ``curll release import``.

The first two write the same artifacts as the stages, into ``--out DIR``, without params:
``DIR/indicators.parquet`` + ``DIR/stats.json``, or ``DIR/words.parquet`` + ``DIR/stats.json``.
``curll release import`` reads a released dataset (the CurLL authors') into curll's records:
``DIR/records.parquet``, ``DIR/skipped.parquet`` and ``DIR/stats.json``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from curll.config import DEFAULT_PARAMS, load_params
from curll.errors import CurllError, fields_named
from curll.schemas import MAX_STAGE
from pipeline.tools.console import say

if TYPE_CHECKING:
    from curll.taxonomy.model import DuplicatePolicy


def parse_stages(text: str | None) -> list[int] | None:
    """``"0-4"`` or ``"0,2,3"`` -> list of ints; None keeps all."""
    if text is None:
        return None
    out: list[int] = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if m is None or (m[2] is not None and int(m[2]) < int(m[1])):
            raise CurllError(f"expected stages like '0-4' or '0,1,3' (a range going up), got {text!r}",
                             field="--stages")  # fmt: skip
        out.extend(range(int(m[1]), int(m[2] or m[1]) + 1))
    if max(out) > MAX_STAGE:
        raise CurllError(f"stages go 0..{MAX_STAGE}, got {text!r}", field="--stages")
    return out


def parse_pairs(text: str, option: str, *, number: bool = False) -> dict[str, str]:
    """``"a=x,b=y"`` -> ``{"a": "x", "b": "y"}``; with ``number`` every value must be an int; a
    key given twice is an error (which one was meant cannot be told)."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip() or not value.strip() or (number and not value.strip().isdigit()):
            kind = "NAME=STAGE" if number else "KEY=COLUMN"
            raise CurllError(f"expected {kind} pairs separated by commas, got {part!r}", field=option)
        if key.strip() in out:
            raise CurllError(f"{key.strip()!r} is given twice", field=option)
        out[key.strip()] = value.strip()
    return out


StagesOpt = Annotated[str | None, typer.Option("--stages", help="keep these stages, e.g. '0-4' or '1,3'")]
OutOpt = Annotated[Path, typer.Option("--out", help="output folder")]


#: the taxonomy library's argument names and the params its messages name, as ``curll taxonomy
#: import`` spells them
_TABLE_OPTIONS = {"stages": "--stages", "layout": "--layout", "columns": "--columns",
                  "taxonomy.columns": "--columns", "taxonomy.grades": "--grades"}  # fmt: skip
_TABLE_TEXT = {"taxonomy.columns.": "--columns ", "taxonomy.columns": "--columns",
               "taxonomy.grades": "--grades"}  # fmt: skip


def register(stage_apps: dict[str, typer.Typer]) -> None:
    """Add the importers to the ``taxonomy`` and ``vocab`` command groups."""
    taxonomy, vocab = stage_apps["taxonomy"], stage_apps["vocab"]

    @taxonomy.command("import", help="Import a taxonomy: writes DIR/indicators.parquet and DIR/stats.json.")
    def taxonomy_import(
        files: Annotated[list[Path], typer.Argument(help="input files (or folders)")],
        out: OutOpt,
        layout: Annotated[str, typer.Option("--layout", help="curll-csv, curll-yaml or table")] = "curll-csv",
        stages: StagesOpt = None,
        duplicates: Annotated[
            str,
            typer.Option("--duplicates", help="a repeated indicator: error (stop) or drop (keep the first)"),
        ] = "error",
        columns: Annotated[
            str | None,
            typer.Option(
                "--columns",
                help="layout table: 'skill=Domain,goal=Standard[,subskill=..][,indicator=..,grade=..]'",
            ),
        ] = None,
        grades: Annotated[
            str | None, typer.Option("--grades", help="layout table: grade to stage, e.g. 'K=0,1=1,2=2'")
        ] = None,
    ) -> None:
        from curll.taxonomy import TableLayout, import_taxonomy, save_taxonomy
        from pipeline.taxonomy import report_dropped

        if duplicates not in ("error", "drop"):
            raise CurllError(f"must be error or drop, got {duplicates!r}", field="--duplicates")
        if (columns is not None or grades is not None) and layout != "table":
            raise CurllError(
                f"--columns and --grades go with --layout table, not {layout!r}", field="--layout"
            )
        table = None
        if columns is not None or grades is not None:
            named = parse_pairs(columns or "", "--columns")
            unknown = sorted(set(named) - {"skill", "subskill", "goal", "indicator", "grade"})
            if unknown or not {"skill", "goal"} <= set(named):
                allowed = "skill and goal, and optionally subskill, indicator and grade"
                raise CurllError(f"name {allowed}; got {sorted(named)}", field="--columns")
            stage_of = {k: int(v) for k, v in parse_pairs(grades or "", "--grades", number=True).items()}
            for grade, stage in stage_of.items():
                if stage > MAX_STAGE:
                    raise CurllError(f"grade {grade!r} maps to stage {stage}; stages go 0..{MAX_STAGE}",
                                     field="--grades")  # fmt: skip
            with fields_named(_TABLE_OPTIONS, _TABLE_TEXT):
                table = TableLayout(grades=stage_of, **named)
        with fields_named(_TABLE_OPTIONS, _TABLE_TEXT):
            got = import_taxonomy(
                layout,
                files,
                stages=parse_stages(stages),
                duplicates=cast("DuplicatePolicy", duplicates),
                columns=table,
            )
        report_dropped(got)
        stats = save_taxonomy(got.table, out / "indicators.parquet", out / "stats.json", got.dropped)
        say(f"{len(got.table)} indicators -> {out / 'indicators.parquet'}; per stage: {stats['stages']}")

    @vocab.command("import", help="Import AoA vocabulary: writes DIR/words.parquet and DIR/stats.json.")
    def vocab_import(
        file: Annotated[Path, typer.Argument(help="input CSV")],
        out: OutOpt,
        fmt: Annotated[str, typer.Option("--format", help="kuperman or curll-words")] = "kuperman",
        max_per_stage: Annotated[
            int, typer.Option("--max-per-stage", help="seeded cap per stage; 0 = none")
        ] = 0,
        stages: StagesOpt = "0-4",
        bands: Annotated[str, typer.Option("--bands", help="exclusive (paper) or cumulative")] = "exclusive",
        dedup: Annotated[
            str,
            typer.Option(
                "--dedup", help="kuperman: lemma_row (the lemma's own row) or first_row (the authors')"
            ),
        ] = "lemma_row",
        seed: Annotated[int, typer.Option("--seed")] = 42,
    ) -> None:
        from curll.vocab import BandMode, Dedup, import_vocab, save_vocab

        if bands not in ("exclusive", "cumulative"):
            raise CurllError(f"must be exclusive or cumulative, got {bands!r}", field="--bands")
        if not 0 <= seed < 2**32:  # what numpy's generators take
            raise CurllError(f"must be 0..{2**32 - 1}, got {seed}", field="--seed")
        if dedup not in ("lemma_row", "first_row"):
            raise CurllError(f"must be lemma_row or first_row, got {dedup!r}", field="--dedup")
        wanted = parse_stages(stages) or list(range(5))
        mode, keep = cast(BandMode, bands), cast(Dedup, dedup)
        named = {
            "format": "--format",
            "max_per_stage": "--max-per-stage",
            "dedup": "--dedup",
            "stages": "--stages",
        }
        with fields_named(named):
            df = import_vocab(
                fmt, file, stages=wanted, bands=mode, dedup=keep, max_per_stage=max_per_stage, seed=seed
            )
        stats = save_vocab(df, wanted, out / "words.parquet", out / "stats.json")
        say(f"{len(df)} words -> {out / 'words.parquet'}; per stage: {stats['stages']}")


def register_release(app: typer.Typer) -> None:
    """Add ``curll release import``."""
    release = typer.Typer(help="Released datasets read into curll's own tables.", no_args_is_help=True)
    app.add_typer(release, name="release")

    @release.command(
        "import",
        help="Import downloaded release repositories: writes DIR/records.parquet, DIR/skipped.parquet "
        "and DIR/stats.json (docs/release-import.md).",
    )
    def release_import(
        sources: Annotated[
            list[str],
            typer.Argument(help="repository folders (stage3_cqa_eval/ ...), or KIND=FOLDER for another name"),
        ],
        out: OutOpt,
        layout: Annotated[str, typer.Option("--layout", help="curll-hub: the CurLL authors' Hub release")] = (
            "curll-hub"
        ),
        system: Annotated[
            str | None,
            typer.Option("--system", help="system turn of every record (default: split.system_prompt)"),
        ] = None,
        params: Annotated[
            Path, typer.Option("--params", help="params file read for the system turn")
        ] = DEFAULT_PARAMS,
    ) -> None:
        from curll.imports import LAYOUTS, import_release, parse_source

        if layout not in LAYOUTS:
            raise CurllError(f"must be one of {', '.join(LAYOUTS)}, got {layout!r}", field="--layout")
        if system is None:
            named = params != DEFAULT_PARAMS
            if named and not params.is_file():
                raise CurllError("no such params file (the system turn is read from it)", file=params,
                                 field="--params")  # fmt: skip
            system = load_params(params).split.system_prompt if params.is_file() else ""
        stats = import_release([parse_source(s) for s in sources], out, system=system)
        skipped = sum(stats["skipped"].values())
        say(f"{stats['records']} records -> {out / 'records.parquet'}; {skipped} skipped; "
            f"per stage/type/split: {stats['by_stage_type_split']}")  # fmt: skip
