"""DVC stage ``split``: rate a sample of units with the LLM, pick test / validation / train, decontaminate.

Reads the verify tables (every instance type's), the indicators and ``params.split`` / ``params.llm``
(the rater's profile); :func:`curll.split.files.split_files` does the work. Writes
``out.ratings`` (one LLM rating per rated unit: ``split.rate_per_indicator`` per indicator and
type, with provenance), ``out.units`` (split, rank, contaminated), ``out.records`` (chat-format
records of every kept instance, with its split), ``out.rejects`` (contaminated train units) and
``out.stats``. Memory holds the units' ids and the rated sample: the texts go to a scratch
SQLite file (:class:`~curll.split.workspace.Workspace`), where the records are also sorted, and
are read and written a batch at a time; the four tables appear together or not at all.
"""

from __future__ import annotations

import pandas as pd

from curll.artifacts import read_table
from curll.config import Params
from curll.instances import TYPES
from curll.llm.factory import engine_from_params, make_task
from curll.schemas import IndicatorSchema, instance_schema
from curll.split.files import split_files
from curll.split.imported import imported_files
from curll.split.units import RATING, rate
from pipeline.tools.console import say


def run(params: Params) -> None:
    p, v = params.split, params.verify.out
    if p.source == "import":
        stats = imported_files(p, stages=params.train.stages, types=params.evaluate.types)
        say("split: imported records " + ", ".join(f"{k} {n}" for k, n in stats["records"].items()))
        return
    indicators = read_table(params.taxonomy.out.indicators, IndicatorSchema)
    task = make_task(params, RATING, profile=p.rater)

    def rated(units: pd.DataFrame) -> pd.DataFrame:
        llm, models = params.llm, params.llm_models
        with engine_from_params(llm, models=models, desc="split: rate", profile=p.rater) as engine:
            return rate(units, indicators, engine, task)

    tables = {k: (v.table(k), instance_schema(k)) for k in TYPES}
    stats = split_files(tables, indicators, p, rated)
    say("split: records " + ", ".join(f"{k} {n}" for k, n in stats["records"].items()))
