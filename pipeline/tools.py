"""Public importers: ``curll taxonomy import`` and ``curll vocab import``.

These write the same artifacts as the stages, into ``--out DIR``, without params:
``DIR/indicators.parquet`` + ``DIR/stats.json``, or ``DIR/words.parquet`` + ``DIR/stats.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import typer

from curll.errors import CurllError
from pipeline.report import say


def parse_stages(text: str | None) -> list[int] | None:
    """``"0-4"`` or ``"0,2,3"`` -> list of ints; None keeps all."""
    if text is None:
        return None
    out: list[int] = []
    try:
        for part in text.split(","):
            lo, _, hi = part.strip().partition("-")
            out.extend(range(int(lo), int(hi) + 1) if hi else [int(lo)])
    except ValueError:
        raise CurllError(f"expected stages like '0-4' or '0,1,3', got {text!r}", field="--stages") from None
    return out


StagesOpt = Annotated[str | None, typer.Option("--stages", help="keep these stages, e.g. '0-4' or '1,3'")]
OutOpt = Annotated[Path, typer.Option("--out", help="output folder")]


def register(stage_apps: dict[str, typer.Typer]) -> None:
    """Add the importers to the ``taxonomy`` and ``vocab`` command groups."""
    taxonomy, vocab = stage_apps["taxonomy"], stage_apps["vocab"]

    @taxonomy.command("import", help="Import a taxonomy: writes DIR/indicators.parquet and DIR/stats.json.")
    def taxonomy_import(
        files: Annotated[list[Path], typer.Argument(help="input files (or folders)")],
        out: OutOpt,
        layout: Annotated[str, typer.Option("--layout", help="curll-csv or curll-yaml")] = "curll-csv",
        stages: StagesOpt = None,
    ) -> None:
        from curll.taxonomy import import_taxonomy, save_taxonomy

        df = import_taxonomy(layout, files, stages=parse_stages(stages))
        stats = save_taxonomy(df, out / "indicators.parquet", out / "stats.json")
        say(f"{len(df)} indicators -> {out / 'indicators.parquet'}; per stage: {stats['stages']}")

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
        seed: Annotated[int, typer.Option("--seed")] = 42,
    ) -> None:
        from curll.vocab import BandMode, import_vocab, save_vocab

        if bands not in ("exclusive", "cumulative"):
            raise CurllError(f"must be exclusive or cumulative, got {bands!r}", field="--bands")
        wanted = parse_stages(stages) or list(range(5))
        mode = cast(BandMode, bands)
        df = import_vocab(fmt, file, stages=wanted, bands=mode, max_per_stage=max_per_stage, seed=seed)
        stats = save_vocab(df, wanted, out / "words.parquet", out / "stats.json")
        say(f"{len(df)} words -> {out / 'words.parquet'}; per stage: {stats['stages']}")
