"""The ``llm`` section: which model every LLM stage asks, and how.

``llm.profiles`` names backend settings; ``llm.use`` picks the one the generation stages
(skill_graph, templates, generate) use, so switching from the embedded tiny model to a
real one is one change: ``dvc exp run -S llm.use=vllm``. Each profile is validated
against its backend's own model (a ``transformers`` profile rejects ``base_url``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictStr, model_validator

from curll.config.base import Number, PathStr, Positive, Section
from curll.llm.types import Sampling


class SamplingParams(Section):
    """Sampling sent with every request; the paper generates at temperature 0.3, 1024 new tokens."""

    temperature: Annotated[Number, Field(ge=0, le=2)]
    top_p: Annotated[Number, Field(gt=0, le=1)]
    max_tokens: Positive
    seed: int

    def to_sampling(self) -> Sampling:
        return Sampling(float(self.temperature), float(self.top_p), self.max_tokens, self.seed)


class MaxChars(Section):
    """Caps on generated JSON string fields (schema ``maxLength``), in characters.

    ``long``: passages and responses; ``short``: topics, questions, reasons. A real model
    stops well before them; a random model always runs to the cap, so the embedded
    profile uses small caps to finish inside ``max_tokens``.
    """

    long: Positive
    short: Positive


class _Profile(Section):
    model: Annotated[StrictStr, Field(min_length=1)]
    batch_size: Positive = Field(description="requests handed to the backend at once (and cached together)")
    sampling: SamplingParams
    max_chars: MaxChars


class TransformersProfile(_Profile):
    """A local Hugging Face model; ``model: embedded`` means the one the generate_model stage builds."""

    backend: Literal["transformers"]
    device: Literal["auto", "cpu", "cuda"] = "auto"
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"


class OpenAIProfile(_Profile):
    """Any OpenAI-compatible server; the key is read from the env var ``api_key_env``."""

    backend: Literal["openai"]
    base_url: Annotated[StrictStr, Field(min_length=1)]
    api_key_env: Annotated[StrictStr, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
    concurrency: Positive
    timeout_s: Annotated[Number, Field(gt=0)]
    max_retries: Annotated[int, Field(ge=0)] = 6
    json_mode: Literal["json_schema", "json_object", "none"] = "json_schema"


class VLLMProfile(_Profile):
    """In-process vLLM (GPU): tensor parallel inside one engine, data parallel across engines."""

    backend: Literal["vllm"]
    tensor_parallel: Positive = 1
    data_parallel: Positive = 1
    gpu_memory_utilization: Annotated[Number, Field(gt=0, le=1)] = 0.9
    max_model_len: Positive | None = None
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"


Profile = Annotated[TransformersProfile | OpenAIProfile | VLLMProfile, Field(discriminator="backend")]


class LLMParams(Section):
    """``llm``: model profiles, the one in use, the request cache and attempts per request."""

    use: Annotated[StrictStr, Field(min_length=1)]
    cache: PathStr = Field(description="SQLite request cache shared by every LLM stage (not a DVC output)")
    attempts: Positive = Field(description="tries per request before it is kept as a reject")
    profiles: dict[str, Profile] = Field(min_length=1)

    @model_validator(mode="after")
    def _use_is_a_profile(self) -> LLMParams:
        if self.use not in self.profiles:
            raise ValueError(f"llm.use '{self.use}' is not one of llm.profiles: {sorted(self.profiles)}")
        return self

    @property
    def profile(self) -> TransformersProfile | OpenAIProfile | VLLMProfile:
        return self.profiles[self.use]
