"""Stage vocabulary from Age-of-Acquisition data.

Public API::

    df = import_vocab("kuperman", "AoA_51715_words.csv", stages=range(5), max_per_stage=1000, seed=42)
    stats = vocab_stats(df, range(5))   # {"stages": {"0": {"words": n}, ...}}

``df`` follows :class:`curll.schemas.WordSchema`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from curll.artifacts import validate, write_table_and_stats
from curll.errors import CurllError
from curll.schemas import WordSchema
from curll.vocab.bands import BandMode, assign_stages, vocab_stats
from curll.vocab.sources import FORMATS, Candidate, Dedup, read_candidates


def import_vocab(
    fmt: str,
    path: str | Path,
    *,
    stages: Iterable[int] = range(5),
    bands: BandMode = "exclusive",
    dedup: Dedup = "lemma_row",
    max_per_stage: int = 0,
    seed: int = 0,
) -> pd.DataFrame:
    """Read ``path`` in format ``fmt`` and return the validated words table; a CurllError naming
    the file and the stages when any requested stage gets no word.

    ``dedup`` picks which row of a repeated (lemma, AoA) a ``kuperman`` file keeps
    (:mod:`curll.vocab.sources`); ``curll-words`` lists have no such repeats."""
    if max_per_stage < 0:
        raise CurllError("must be >= 0 (0 = no cap)", field="max_per_stage")
    candidates = read_candidates(fmt, path, dedup)
    stages = list(stages)
    df = assign_stages(candidates, stages, bands=bands, max_per_stage=max_per_stage, seed=seed)
    empty = sorted(set(stages) - set(df["stage"]))
    if empty:  # a stage without words would seed nothing: say so here, not as missing seeds later
        its = "its" if len(empty) == 1 else "their"
        why = (f"none of the file's {len(candidates)} content words has an age of acquisition in {its} band"
               if fmt == "kuperman" else f"the list gives no word of {its} stage")  # fmt: skip
        asked = sorted(set(stages))
        raise CurllError(
            f"no word for stage(s) {empty} (of {asked} asked for): {why}", file=path, field="stages"
        )
    return validate(df, WordSchema, source=path)


def save_vocab(
    df: pd.DataFrame, stages: Iterable[int], words_path: str | Path, stats_path: str | Path
) -> dict[str, object]:
    """Write ``words.parquet`` (validated, atomic) and its stats JSON; return the stats."""
    return write_table_and_stats(df, words_path, WordSchema, stats_path, vocab_stats(df, stages))


__all__ = [
    "FORMATS",
    "BandMode",
    "Candidate",
    "Dedup",
    "assign_stages",
    "import_vocab",
    "save_vocab",
    "vocab_stats",
]
