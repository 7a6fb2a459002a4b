"""What the params and the prompt files name of an LLM request: the sampling params sent with
it (:class:`Sampling`) and the roles of its messages (:data:`Role`).

The rest of a request (its messages, schema and content key) is the LLM layer's
(:mod:`curll.llm.types`). These two live apart, on the ground floor (this module imports
nothing of curll), so that the params (:mod:`curll.config`) and the prompt files
(:mod:`curll.prompts`), which every stage reads, do not make every stage depend on the LLM
layer's types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Sampling:
    """Sampling params sent with every request (the paper's generation defaults)."""

    temperature: float = 0.3
    top_p: float = 1.0
    max_tokens: int = 1024
    seed: int | None = None
    presence_penalty: float = 0.0  # subtracted from a token's logit once the answer has used it
    frequency_penalty: float = 0.0  # subtracted once per earlier use in the answer
