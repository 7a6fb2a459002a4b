"""The verify stage on tables in memory: small inputs for tests and benchmarks.

:func:`verify` writes the tables to a scratch folder, runs
:func:`curll.verify.core.verify_files` on them (the stage's code, streamed as in the
pipeline) and reads the outputs back.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from curll.artifacts import read_table, write_table
from curll.instances import TYPES
from curll.schemas import GenerationSchema, RejectSchema, instance_schema
from curll.verify.core import verify_files
from curll.verify.encoder import Encoder
from curll.verify.screen import Settings


@dataclass(frozen=True)
class VerifyResult:
    kept: dict[str, pd.DataFrame]  # by type: context, ir, cqa, csqa
    rejects: pd.DataFrame
    metrics: dict[str, Any]


def verify(
    tables: Mapping[str, pd.DataFrame], generations: pd.DataFrame, encoder: Encoder, settings: Settings
) -> VerifyResult:
    """:func:`~curll.verify.core.verify_files` on ``tables`` (by instance type, every one of
    :data:`curll.instances.TYPES`) and ``generations``: the kept tables, the rejects and the
    metrics."""
    with tempfile.TemporaryDirectory(prefix="curll-verify-in-") as tmp:
        where = Path(tmp)
        inputs = {k: where / f"in-{k}.parquet" for k in TYPES}
        outputs = {k: where / f"out-{k}.parquet" for k in TYPES}
        for k in TYPES:
            write_table(tables[k], inputs[k], instance_schema(k))
        write_table(generations, where / "generations.parquet", GenerationSchema)
        metrics = verify_files(
            inputs, where / "generations.parquet", outputs, where / "rejects.parquet", encoder, settings
        )
        kept = {k: read_table(outputs[k], instance_schema(k)) for k in TYPES}
        return VerifyResult(kept, read_table(where / "rejects.parquet", RejectSchema), metrics)
