"""Edge prediction and weight rating over candidate pairs.

Contract of :func:`predict_edges`: one edge request per candidate pair, whose schema
admits only the three consistent answers (a -> b, b -> a, no edge with "NA" ids), so a
contradictory answer is retried and then kept as a reject with its reason. Every
accepted edge then gets one weight request (1-5). Returns an
:class:`~curll.schemas.EdgeSchema` table: one row per pair, rejects included.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from curll.artifacts import records
from curll.config.llm import MaxChars
from curll.llm.engine import Engine
from curll.llm.tasks import Answer, Task, TaskDef, ask, llm_use, provenance
from curll.schemas.graph import EdgeSchema
from curll.skill_graph.candidates import Pair


def edge_schema(a_id: str, b_id: str, caps: MaxChars) -> dict[str, Any]:
    """One branch per consistent answer (a -> b, b -> a, no edge): a contradiction is a schema error."""

    def branch(edge: bool, src: str, dst: str) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "edge": {"const": edge},
                "from": {"const": src},
                "to": {"const": dst},
                "reason": {"type": "string", "maxLength": caps.short},
            },
            "required": ["edge", "from", "to", "reason"],
            "additionalProperties": False,
        }

    return {"anyOf": [branch(True, a_id, b_id), branch(True, b_id, a_id), branch(False, "NA", "NA")]}


def weight_schema(caps: MaxChars) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "weight": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
            "reason": {"type": "string", "maxLength": caps.short},
        },
        "required": ["weight", "reason"],
        "additionalProperties": False,
    }


#: the edge task (its schema here has placeholder ids of the right length: :func:`predict_edges`
#: asks each pair under :func:`edge_schema` of its own ids) and the weight task, answered by
#: ``llm.use``'s profile
EDGE = TaskDef("edge", lambda params: params.skill_graph.prompts.edge,
               lambda params, caps: edge_schema("0" * 16, "f" * 16, caps), llm_use)  # fmt: skip
WEIGHT = TaskDef("edge weight", lambda params: params.skill_graph.prompts.weight,
                 lambda params, caps: weight_schema(caps), llm_use)  # fmt: skip


def predict_edges(
    ind: pd.DataFrame, pairs: list[Pair], engine: Engine, edge: Task, weight: Task, caps: MaxChars
) -> pd.DataFrame:
    rows_by_id = {r["indicator_id"]: r for r in records(ind)}
    requests = [
        Task(edge.prompt, edge_schema(a, b, caps), edge.sampling).request(
            {"a": rows_by_id[a], "b": rows_by_id[b]}
        )
        for a, b in pairs
    ]
    engine.desc = "edges"
    results = engine.run(requests, label=edge.prompt.path.stem)
    answers = [Answer(q, r) for q, r in zip(requests, results, strict=True)]
    rows = [_edge_row(pair, ans) for pair, ans in zip(pairs, answers, strict=True)]
    todo = [i for i, r in enumerate(rows) if r["status"] == "ok" and r["edge"]]
    fields = [
        {
            "src": rows_by_id[rows[i]["src"]],
            "dst": rows_by_id[rows[i]["dst"]],
            "reason": rows[i]["edge_reason"],
        }
        for i in todo
    ]
    engine.desc = "edge weights"
    for i, ans in zip(todo, ask(engine, weight, fields), strict=True):
        rows[i]["weight_raw"] = ans.result.text
        if ans.ok:
            rows[i]["weight"] = int(ans.result.parsed["weight"])
            rows[i]["weight_reason"] = ans.result.parsed["reason"]
        else:
            rows[i]["status"], rows[i]["reason"] = "reject", f"weight: {ans.result.reason}"
    return pd.DataFrame(rows, columns=list(EdgeSchema.to_schema().columns))


def _edge_row(pair: Pair, ans: Answer) -> dict[str, Any]:
    row: dict[str, Any] = {
        "a_id": pair[0], "b_id": pair[1], "edge": False, "src": "", "dst": "", "weight": 0,
        "edge_reason": "", "weight_reason": "", "weight_raw": "",
    }  # fmt: skip
    if not ans.ok:
        return {**provenance(ans), **row}
    parsed = ans.result.parsed
    row["edge_reason"] = parsed["reason"]
    if parsed["edge"]:
        row.update(edge=True, src=parsed["from"], dst=parsed["to"])
    return {**provenance(ans), **row}
