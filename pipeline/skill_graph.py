"""DVC stage ``skill_graph``: the weighted prerequisite graph between indicators.

Reads the indicators, ``params.skill_graph`` and ``params.llm``; writes ``out.edges`` (every
candidate pair with its decision), ``out.graphml`` and ``out.graph_json`` (the graph) and
``out.stats`` (edges per stage pair, degrees, cycles, back edges). No candidate pair is a
YieldError naming ``skill_graph.candidates``, before any model is loaded, and nothing is written.
"""

from __future__ import annotations

from curll.artifacts import read_table, write_json, write_table
from curll.config import Params
from curll.llm.factory import engine_from_params, make_task
from curll.schemas import EdgeSchema, IndicatorSchema
from curll.skill_graph.analysis import build_graph, graph_stats, save_graph
from curll.skill_graph.candidates import candidate_pairs
from curll.skill_graph.edges import EDGE, WEIGHT, predict_edges
from curll.yields import YieldError, check_yields, measure, public, unit_frame
from pipeline.tools.console import say


def run(params: Params) -> None:
    p, llm = params.skill_graph, params.llm
    ind = read_table(params.taxonomy.out.indicators, IndicatorSchema)
    pairs = candidate_pairs(ind, p.candidates, neighbours=p.neighbours, max_stage_gap=p.max_stage_gap)
    say(f"skill_graph: {len(pairs)} candidate pairs ({p.candidates})")
    if not pairs:  # nothing to ask: a graph of no edge would pass for one the model found empty
        gap = "" if p.candidates == "all" else f", max_stage_gap {p.max_stage_gap}"
        raise YieldError(f"skill_graph: no candidate pair among {len(ind)} indicators (candidates "
                         f"{p.candidates}{gap}): widen skill_graph.candidates or max_stage_gap",
                         field="skill_graph.candidates")  # fmt: skip
    caps = llm.profile.max_chars
    edge_task = make_task(params, EDGE)  # predict_edges asks each pair under its own schema
    weight_task = make_task(params, WEIGHT)
    with engine_from_params(llm, models=params.llm_models, desc="edges") as engine:
        edges = predict_edges(ind, pairs, engine, edge_task, weight_task, caps)
    stage_of = dict(zip(ind["indicator_id"], ind["stage"], strict=True))
    yields = measure(
        unit_frame([stage_of[a] for a in edges["a_id"]], "edge", edges["status"] == "ok", edges["reason"])
    )
    check_yields("skill_graph", yields, p.min_yield, key="skill_graph.min_yield")
    graph = build_graph(ind, edges)
    stats = {**graph_stats(graph, edges), "yields": public(yields)}
    write_table(edges, p.out.edges, EdgeSchema)
    save_graph(graph, p.out.graphml, p.out.graph_json)
    write_json(p.out.stats, stats)
    say(f"skill_graph: {stats['edges']} edges, {stats['back_edges']} back edges, dag={stats['is_dag']}")
