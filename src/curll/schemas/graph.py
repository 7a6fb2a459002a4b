"""Schema of the skill graph stage: candidate pairs and their decisions."""

from __future__ import annotations

import pandera.pandas as pa
from pandera.typing import Series

from curll.schemas.data import HEX16
from curll.schemas.generation import Provenance


class EdgeSchema(Provenance):
    """``edges.parquet``: one row per candidate pair (a_id, b_id), asked once.

    Provenance columns describe the edge-prediction request. ``edge`` is the model's
    decision; for an accepted edge ``src`` is the prerequisite and ``dst`` the dependent,
    ``weight`` its 1-5 strength (0 when there is no edge or no valid weight). ``status``
    is ``reject`` when either request failed or the answer contradicts the pair (then
    ``reason`` says why). ``weight_raw`` keeps the weight request's raw text.
    """

    a_id: Series[str] = pa.Field(str_matches=HEX16)
    b_id: Series[str] = pa.Field(str_matches=HEX16)
    edge: Series[bool]
    src: Series[str]
    dst: Series[str]
    weight: Series[int] = pa.Field(ge=0, le=5)
    edge_reason: Series[str]
    weight_reason: Series[str]
    weight_raw: Series[str]

    class Config:
        strict = True
        unique = ["a_id", "b_id"]  # noqa: RUF012 (pandera reads a plain list)
