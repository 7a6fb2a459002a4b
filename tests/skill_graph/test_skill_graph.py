"""Skill graph: candidate strategies, consistent edge answers, cycles and back edges."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import networkx as nx
import pandas as pd
import pytest

from curll.config import load_params
from curll.llm.tasks import Task
from curll.prompts import load_prompt
from curll.sampling import Sampling
from curll.skill_graph.analysis import build_graph, graph_stats, save_graph
from curll.skill_graph.candidates import candidate_pairs
from curll.skill_graph.edges import edge_schema, predict_edges, weight_schema
from tests.fakes import engine

ROOT = Path(__file__).resolve().parents[2]
CAPS = load_params(ROOT / "params.yaml").llm.profiles["embedded"].max_chars


def ind() -> pd.DataFrame:
    rows = [
        ("0000000000000001", 0, "Maths", "count objects to ten"),
        ("0000000000000002", 1, "Maths", "count objects to twenty"),
        ("0000000000000003", 2, "Maths", "add numbers to twenty"),
        ("0000000000000004", 0, "Reading", "name letters of the alphabet"),
        ("0000000000000005", 1, "Reading", "read simple words aloud"),
    ]
    return pd.DataFrame(
        {
            "indicator_id": [r[0] for r in rows],
            "stage": [r[1] for r in rows],
            "age_group": ["5-6"] * 5,
            "skill": [r[2] for r in rows],
            "subskill": ["x"] * 5,
            "goal": ["g"] * 5,
            "indicator": [r[3] for r in rows],
        }
    )


def test_candidate_strategies():
    df = ind()
    assert len(candidate_pairs(df, "all", neighbours=1, max_stage_gap=0)) == 10
    related = candidate_pairs(df, "related", neighbours=1, max_stage_gap=1)
    assert set(related) == {
        ("0000000000000001", "0000000000000002"),
        ("0000000000000002", "0000000000000003"),
        ("0000000000000004", "0000000000000005"),
    }
    nearest = candidate_pairs(df, "nearest", neighbours=1, max_stage_gap=1)
    assert ("0000000000000001", "0000000000000002") in nearest  # "count objects to ..." are closest
    assert all(a < b for a, b in nearest)


def test_edge_schema_admits_only_consistent_answers():
    schema = edge_schema("a", "b", CAPS)
    jsonschema.validate({"edge": True, "from": "b", "to": "a", "reason": "r"}, schema)
    jsonschema.validate({"edge": False, "from": "NA", "to": "NA", "reason": "r"}, schema)
    for bad in (
        {"edge": True, "from": "a", "to": "a", "reason": ""},
        {"edge": False, "from": "a", "to": "NA", "reason": ""},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_predict_edges_then_graph_with_a_cycle_and_a_back_edge(tmp_path):
    df = ind()
    pairs = [
        ("0000000000000001", "0000000000000002"),
        ("0000000000000002", "0000000000000003"),
        ("0000000000000001", "0000000000000003"),
        ("0000000000000004", "0000000000000005"),
    ]
    # 1 -> 2 -> 3 -> 1 is a cycle; 3 -> 1 also points from stage 2 back to stage 0; 4-5 unrelated;
    # the weight request for 2 -> 3 fails (not JSON) and that pair is kept as a reject
    direction = {
        pairs[0]: ("0000000000000001", "0000000000000002"),
        pairs[1]: ("0000000000000002", "0000000000000003"),
        pairs[2]: ("0000000000000003", "0000000000000001"),
    }

    def answer(req):
        user = req.messages[1].content
        if "Later skill" in user:  # prompts/edge_weight.j2
            return (
                "oops"
                if "add numbers" in user.split("Later skill")[1].split("\n")[0]
                else {"weight": 4, "reason": "r"}
            )
        ids = tuple(sorted(x.split(",")[0] for x in user.split("(id ")[1:]))
        if ids in direction:
            src, dst = direction[ids]
            return {"edge": True, "from": src, "to": dst, "reason": "needed"}
        return {"edge": False, "from": "NA", "to": "NA", "reason": "unrelated"}

    eng, _ = engine(answer)
    edge = Task(load_prompt(ROOT / "prompts/edge.j2"), {}, Sampling())
    weight = Task(load_prompt(ROOT / "prompts/edge_weight.j2"), weight_schema(CAPS), Sampling())
    edges = predict_edges(df, pairs, eng, edge, weight, CAPS)
    assert edges["status"].tolist() == ["ok", "reject", "ok", "ok"]
    assert str(edges.loc[1, "reason"]).startswith("weight: invalid JSON")
    g = build_graph(df, edges)
    assert set(g.edges) == {
        ("0000000000000001", "0000000000000002"),
        ("0000000000000003", "0000000000000001"),
    }
    g.add_edge("0000000000000002", "0000000000000003", weight=2)  # close the cycle for the checks
    stats = graph_stats(g, edges)
    assert not stats["is_dag"] and stats["cyclic_components"] == 1 and stats["nodes_in_cycles"] == 3
    assert stats["back_edges"] == 1 and stats["edges_per_stage_pair"]["2->0"] == 1
    save_graph(g, tmp_path / "g.graphml", tmp_path / "g.json")
    assert nx.read_graphml(tmp_path / "g.graphml").number_of_edges() == 3


def test_cycle_examples_are_deterministic_and_start_at_the_smallest_node():
    g: nx.DiGraph[str] = nx.DiGraph()
    g.add_edges_from([("c", "a"), ("a", "b"), ("b", "c"), ("x", "y"), ("y", "x"), ("b", "x")], weight=3)
    for n in g:
        g.nodes[n]["stage"] = 0
    edges = pd.DataFrame({"status": ["ok"], "edge": [True]})
    stats = graph_stats(g, edges)
    assert stats["example_cycles"] == [["a", "b", "c"], ["x", "y"]]
    assert stats["cyclic_components"] == 2


def test_a_reason_with_control_characters_is_graphml_that_reads_back(tmp_path):
    """The engine accepts raw control characters in a model's JSON strings; XML cannot carry
    them, so GraphML gets spaces in their place and the node-link JSON keeps them."""
    import json

    from curll.skill_graph.analysis import save_graph

    g: nx.DiGraph[str] = nx.DiGraph()
    g.add_node("a", indicator="Counts\x0bto ten", stage=0)
    g.add_node("b", indicator="Adds", stage=1)
    g.add_edge("a", "b", weight=3, reason="needed\x01 first\ttab", weight_reason="\ufffe")
    save_graph(g, tmp_path / "g.graphml", tmp_path / "g.json")
    back = nx.read_graphml(tmp_path / "g.graphml")
    assert (
        back.edges["a", "b"]["reason"] == "needed  first\ttab"
        and back.nodes["a"]["indicator"] == "Counts to ten"
    )
    linked = json.loads((tmp_path / "g.json").read_text())
    assert linked["edges"][0]["reason"] == "needed\x01 first\ttab"
    assert g.edges["a", "b"]["reason"] == "needed\x01 first\ttab"  # the graph given is left as it was


def test_no_candidate_pair_stops_the_stage_before_any_model_and_writes_nothing(tmp_path):
    """One indicator: no pair to ask about. Before, the stage wrote an empty edge table and a
    graph of no edge, exit 0, as if the model had found none."""
    from curll.artifacts import write_table
    from curll.config import parse_params
    from curll.schemas import IndicatorSchema
    from curll.yamlio import load_yaml
    from curll.yields import YieldError
    from pipeline import skill_graph
    from tests import instances as inst

    data = load_yaml(ROOT / "params.yaml")
    data["taxonomy"]["out"]["indicators"] = str(tmp_path / "indicators.parquet")
    data["skill_graph"]["out"] = {
        k: str(tmp_path / "out" / Path(v).name) for k, v in data["skill_graph"]["out"].items()
    }
    data["skill_graph"]["candidates"] = "all"
    one = inst.indicators(["only"]).assign(source="t.yaml", source_row=1)
    write_table(one, tmp_path / "indicators.parquet", IndicatorSchema)
    with pytest.raises(YieldError, match="no candidate pair among 1 indicators") as err:
        skill_graph.run(parse_params(data))
    assert err.value.field == "skill_graph.candidates" and not (tmp_path / "out").exists()
