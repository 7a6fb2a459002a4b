"""DVC stage ``templates``: text-type formats per indicator and kind, from the LLM.

Reads the indicators and ``params.templates`` / ``params.llm``; writes ``out.templates``
(accepted formats), ``out.rejects`` (rejected items with their reason) and ``out.stats``.
"""

from __future__ import annotations

from curll.artifacts import read_table, write_json, write_tables
from curll.config import Params
from curll.llm.factory import engine_from_params, make_task
from curll.schemas import IndicatorSchema, TemplateSchema
from curll.templates import TASK, make_templates
from curll.yields import check_yields, public
from pipeline.tools.console import say


def run(params: Params) -> None:
    p = params.templates
    indicators = read_table(params.taxonomy.out.indicators, IndicatorSchema)
    task = make_task(params, TASK)
    dictionary = p.dictionary.for_profile(params.llm.use)
    with engine_from_params(params.llm, models=params.llm_models, desc="templates") as engine:
        accepted, rejects, stats = make_templates(indicators, engine, task, p, dictionary=dictionary)
    check_yields("templates", stats["yields"], p.min_yield, key="templates.min_yield")
    stats["yields"] = public(stats["yields"])
    write_tables([(accepted, p.out.templates, TemplateSchema), (rejects, p.out.rejects, TemplateSchema)])
    write_json(p.out.stats, stats)
    say(f"templates: {len(accepted)} formats kept, {len(rejects)} rejected -> {p.out.templates}")
