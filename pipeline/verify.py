"""DVC stage ``verify``: filter the generated instances and measure the data (paper Appendix B).

Reads the generate_merge tables and the verify_encoder model (or the full source encoder,
per ``verify.semantic.encoder``); writes the kept instances of every type in ``out.tables``
(``<type>.parquet``, generate's schemas), ``out.rejects`` (every dropped row with its reason),
``out.metrics`` (counts, dedup, diversity, readability) and per-stage CSVs in ``out.plots``.
The passage length range (``verify.context_words``) and the content checks
(``verify.content``: seed word, on topic, grounded, degenerate) are those of the active
``llm.use`` profile; on-topic compares each instance with its indicator from the taxonomy.
A type and stage keeping less than ``verify.min_yield`` stops the stage with its reasons.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curll.artifacts import json_text, read_table, records
from curll.config import Params
from curll.instances import TYPES
from curll.schemas import IndicatorSchema
from curll.verify.content import indicator_text
from curll.verify.core import plot_tables, verify_files
from curll.verify.encoder import load_encoder
from curll.verify.screen import Settings
from curll.yields import public
from pipeline.tools.console import say


def run(params: Params) -> None:
    p, src = params.verify, params.generate_merge.out
    inputs = {k: src.table(k) for k in TYPES}
    outputs = {k: p.out.table(k) for k in TYPES}
    sem = p.semantic
    where = params.verify_encoder.out.model if sem.encoder == "model2vec" else params.verify_encoder.source
    encoder = load_encoder(sem.encoder, where, batch_size=sem.batch_size)
    indicators = read_table(params.taxonomy.out.indicators, IndicatorSchema)
    settings = Settings(
        p,
        words=p.context_words.for_profile(params.llm.use),
        qa_pairs=params.generate.pairs,
        checks=p.content.for_profile(params.llm.use),
        topics={r["indicator_id"]: indicator_text(r) for r in records(indicators)},
    )

    def texts(metrics: dict[str, Any]) -> dict[str | Path, str]:
        """The metrics file and the plots' CSVs, written with the tables."""
        metrics["yields"] = public(metrics["yields"])
        plots: dict[str | Path, str] = {Path(p.out.plots) / f"{name}.csv": frame.to_csv(index=False)
                 for name, frame in plot_tables(metrics).items()}  # fmt: skip
        return {**plots, p.out.metrics: json_text(metrics)}

    metrics = verify_files(inputs, src.generations, outputs, p.out.rejects, encoder, settings, texts=texts)
    counts = metrics["counts"]
    kept = ", ".join(f"{k} {v['kept']}/{v['in']}" for k, v in counts.items())
    say(f"verify: kept of the instances asked for (generation's rejects count as dropped): {kept}")
