"""The skill graph: candidate pairs -> LLM edge prediction and weight rating -> a checked DiGraph.

Modules (import from them directly; this package imports nothing, so a stage's DVC deps
name only the modules it runs): :mod:`curll.skill_graph.candidates` (which pairs to ask about),
:mod:`curll.skill_graph.edges` (the edge and weight tasks), :mod:`curll.skill_graph.analysis`
(graph, stats, GraphML/JSON).
"""
