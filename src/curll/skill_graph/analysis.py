"""The prerequisite graph: build it from accepted edges, check it, save it.

- nodes: every indicator, with stage, age_group, skill, subskill, goal and indicator text;
- edges: accepted, weighted (1-5) prerequisite edges ``src -> dst`` with the model's reasons;
- checks: cycles (strongly connected components with more than one node, and one example
  cycle for each of the first ``max_cycles`` of them), and back edges that point from a later stage to an
  earlier one (a prerequisite should not be taught after what needs it);
- stats: edges per (src stage, dst stage) pair, in/out degree distributions, weights.
GraphML and node-link JSON are written atomically.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import networkx as nx
import pandas as pd

from curll.artifacts import atomic_path, atomic_write_text, records

_NODE_FIELDS = ("stage", "age_group", "skill", "subskill", "goal", "indicator")
#: characters XML 1.0 cannot carry: C0 controls but tab, newline and carriage return; lone
#: surrogates; U+FFFE and U+FFFF
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """``text`` without the characters XML cannot carry (each becomes a space)."""
    return _NOT_XML.sub(" ", text)


def build_graph(ind: pd.DataFrame, edges: pd.DataFrame) -> nx.DiGraph[str]:
    g: nx.DiGraph[str] = nx.DiGraph()
    for row in records(ind):
        g.add_node(row["indicator_id"], **{k: row[k] for k in _NODE_FIELDS})
    accepted = edges[(edges["status"] == "ok") & edges["edge"]]
    for row in records(accepted):
        g.add_edge(
            row["src"],
            row["dst"],
            weight=int(row["weight"]),
            reason=row["edge_reason"],
            weight_reason=row["weight_reason"],
        )
    return g


def graph_stats(g: nx.DiGraph[str], edges: pd.DataFrame, *, max_cycles: int = 20) -> dict[str, Any]:
    stage = nx.get_node_attributes(g, "stage")
    cyclic = sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)
    examples = [_one_cycle(g, scc) for scc in cyclic[:max_cycles]]
    back = [(u, v) for u, v in g.edges if stage[u] > stage[v]]
    pair_counts = Counter(f"{stage[u]}->{stage[v]}" for u, v in g.edges)
    return {
        "nodes": g.number_of_nodes(),
        "edges": g.number_of_edges(),
        "candidates": len(edges),
        "candidate_status": {str(k): int(v) for k, v in edges["status"].value_counts().items()},
        "no_edge": int(((edges["status"] == "ok") & ~edges["edge"]).sum()),
        "is_dag": nx.is_directed_acyclic_graph(g),
        "cyclic_components": len(cyclic),
        "nodes_in_cycles": sum(len(c) for c in cyclic),
        "example_cycles": examples,
        "back_edges": len(back),
        "edges_per_stage_pair": dict(sorted(pair_counts.items())),
        "out_degree": _histogram(d for _, d in g.out_degree()),
        "in_degree": _histogram(d for _, d in g.in_degree()),
        "weights": _histogram(int(d["weight"]) for _, _, d in g.edges(data=True)),
    }


def _one_cycle(g: nx.DiGraph[str], scc: list[str]) -> list[str]:
    """A cycle through the component's smallest node (DFS in edge insertion order: deterministic)."""
    edges = nx.find_cycle(g.subgraph(scc), source=scc[0])
    nodes = [u for u, _ in edges]
    start = nodes.index(min(nodes))
    return nodes[start:] + nodes[:start]


def _histogram(values: Any) -> dict[str, int]:
    return {str(k): v for k, v in sorted(Counter(values).items())}


def save_graph(g: nx.DiGraph[str], graphml: str | Path, node_link: str | Path) -> None:
    """GraphML with every text attribute XML can carry (:func:`_xml_text`: a model's reason may
    hold control characters, which no XML parser reads back); the node-link JSON as it is."""
    safe = g.copy()
    for _, attrs in safe.nodes(data=True):
        attrs.update({k: _xml_text(v) for k, v in attrs.items() if isinstance(v, str)})
    for _, _, attrs in safe.edges(data=True):
        attrs.update({k: _xml_text(v) for k, v in attrs.items() if isinstance(v, str)})
    with atomic_path(graphml) as tmp:
        nx.write_graphml(safe, tmp)
    data = nx.node_link_data(g, edges="edges")
    atomic_write_text(node_link, json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
