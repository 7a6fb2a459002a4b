"""The skill graph: candidate pairs -> LLM edge prediction and weight rating -> a checked DiGraph."""

from curll.skill_graph.analysis import build_graph, graph_stats, save_graph
from curll.skill_graph.candidates import candidate_pairs
from curll.skill_graph.edges import edge_schema, predict_edges, weight_schema

__all__ = [
    "build_graph",
    "candidate_pairs",
    "edge_schema",
    "graph_stats",
    "predict_edges",
    "save_graph",
    "weight_schema",
]
