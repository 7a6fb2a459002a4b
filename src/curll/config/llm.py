"""The ``llm`` section: which model every LLM stage asks, and how.

``llm.profiles`` names backend settings; ``llm.use`` picks the one the generation stages
(skill_graph, templates, generate, split) use, so switching from the embedded tiny model
to a real one is one change: ``dvc exp run -S llm.use=vllm``. Each profile is validated
against its backend's own model (a ``transformers`` profile rejects ``base_url``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StrictBool, StrictInt, StrictStr, model_validator

from curll.config.base import (
    Count,
    Number,
    ParamsError,
    PathStr,
    Positive,
    Section,
    Seed,
    http_url,
    no_credentials,
)
from curll.sampling import Sampling


class SamplingParams(Section):
    """Sampling sent with every request; the paper generates at temperature 0.3, 1024 new tokens.

    presence_penalty / frequency_penalty: subtracted from the logit of every token the answer
    has already used (once, or once per use): OpenAI's definition, which vLLM and llama.cpp
    share. They act on the answer only, never on the prompt; 0 is off."""

    temperature: Annotated[Number, Field(ge=0, le=2)]
    top_p: Annotated[Number, Field(gt=0, le=1)]
    max_tokens: Positive
    seed: Seed
    presence_penalty: Annotated[Number, Field(ge=-2, le=2)] = 0.0
    frequency_penalty: Annotated[Number, Field(ge=-2, le=2)] = 0.0

    def to_sampling(self) -> Sampling:
        return Sampling(
            float(self.temperature),
            float(self.top_p),
            self.max_tokens,
            self.seed,
            float(self.presence_penalty),
            float(self.frequency_penalty),
        )


class TaskSampling(Section):
    """Changes to a profile's ``sampling`` for one task's requests (``task_sampling``); a key
    left out keeps the profile's value. Length and seed are the profile's for every task (the
    caps check reads them)."""

    temperature: Annotated[Number, Field(ge=0, le=2)] | None = None
    top_p: Annotated[Number, Field(gt=0, le=1)] | None = None
    presence_penalty: Annotated[Number, Field(ge=-2, le=2)] | None = None
    frequency_penalty: Annotated[Number, Field(ge=-2, le=2)] | None = None


class MaxChars(Section):
    """Caps on generated JSON string fields (schema ``maxLength``), in characters.

    ``long``: passages and responses; ``short``: topics, questions, answers, reasons. Every
    task's largest possible answer under these caps must fit in ``sampling.max_tokens`` at
    the profile's ``chars_per_token`` (checked when params load), so a model that writes to
    the caps still closes its JSON instead of being cut off.
    """

    long: Positive
    short: Positive


class _Profile(Section):
    model: Annotated[StrictStr, Field(min_length=1)]
    batch_size: Positive = Field(description="requests handed to the backend at once (and cached together)")
    sampling: SamplingParams
    max_chars: MaxChars
    chars_per_token: Annotated[Number, Field(ge=1, le=10)] = Field(
        default=3.5, description="characters per token assumed when caps are checked against max_tokens"
    )
    task_sampling: dict[str, TaskSampling] = Field(
        default_factory=dict,
        description="task (its prompt file's stem, e.g. context) -> changes to `sampling` for that task",
    )

    def sampling_for(self, task: str) -> Sampling:
        """The sampling of ``task``'s requests: ``sampling`` with the task's changes, if any."""
        base = self.sampling.to_sampling()
        change = self.task_sampling.get(task)
        if change is None:
            return base
        changed: dict[str, Any] = {k: float(v) for k, v in change.model_dump(exclude_none=True).items()}
        return dataclasses.replace(base, **changed)


class TransformersProfile(_Profile):
    """A local Hugging Face model: an ``llm_models.builtin`` name (built by its
    ``llm_models@<profile>`` stage), a local folder or a hub id.

    threads: torch intra-op threads (0: torch's default); max_batch: rows decoded together
    (continuous batching); stop_loops: stop a JSON answer caught in a repetition loop early."""

    backend: Literal["transformers"]
    device: Literal["auto", "cpu", "cuda"] = "auto"
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    threads: Count = 0
    max_batch: Positive = 16
    stop_loops: StrictBool = True


JsonMode = Literal["json_schema", "json_object", "llamacpp", "vllm", "none"]


class OpenAIProfile(_Profile):
    """Any OpenAI-compatible server. ``api_key_env`` names the env var holding the key; a server
    that needs none runs with the variable unset (or ``api_key_env: null``). ``base_url`` holds
    no credential (user info, or a query parameter such as ``api_key``): it is refused.

    json_mode, how a schema is sent: ``json_schema`` (OpenAI ``response_format``), ``json_object``
    (plain JSON mode, schema unenforced), ``llamacpp`` (llama.cpp's server: ``json_object`` with
    the schema inside), ``vllm`` (vLLM's server: ``structured_outputs``), ``none``."""

    backend: Literal["openai"]
    base_url: Annotated[
        StrictStr,
        Field(min_length=1),
        AfterValidator(no_credentials("put the key in the environment variable named by api_key_env")),
        AfterValidator(http_url),
    ]
    api_key_env: Annotated[StrictStr, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")] | None = None
    concurrency: Positive
    timeout_s: Annotated[Number, Field(gt=0)]
    max_retries: Annotated[int, Field(ge=0)] = 6
    #: the first retry's wait (s): the n-th waits half to all of backoff_s * 2**n (at most 30 s),
    #: and at least what a 429's Retry-After asks
    backoff_s: Annotated[Number, Field(gt=0)] = 0.5
    json_mode: JsonMode = "json_schema"


class LlamaCppProfile(_Profile):
    """A local GGUF model served by llama.cpp (the ``xllamacpp`` wheel) on loopback: the CPU engine.

    ``model``: an ``llm_models.builtin`` name of ``kind: gguf``, or a path to a ``.gguf`` file.
    The backend starts ``servers`` llama.cpp servers for the stage, each with ``threads``
    threads and ``parallel`` slots of ``context`` tokens (prompt and answer), and stops them
    when the stage ends. One slot per server keeps every answer independent of the others
    (byte for byte: docs/params.md, "Reproducibility"); ``parallel`` > 1 decodes a server's requests together,
    and llama.cpp's answers then depend on which requests shared a step."""

    backend: Literal["llamacpp"]
    threads: Positive = 1
    servers: Positive = 1
    parallel: Positive = 1
    context: Annotated[StrictInt, Field(ge=256)] = 2048
    timeout_s: Annotated[Number, Field(gt=0)] = 600
    stop_loops: StrictBool = True


class VLLMProfile(_Profile):
    """In-process vLLM (GPU): tensor parallel inside one engine, data parallel across engines."""

    backend: Literal["vllm"]
    tensor_parallel: Positive = 1
    data_parallel: Positive = 1
    gpu_memory_utilization: Annotated[Number, Field(gt=0, le=1)] = 0.9
    max_model_len: Positive | None = None
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"


#: a profile's name keys DVC params (``llm.profiles.<name>``: no dots) and names folders (no slashes)
ProfileName = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")]
AnyProfile = TransformersProfile | OpenAIProfile | LlamaCppProfile | VLLMProfile
Profile = Annotated[AnyProfile, Field(discriminator="backend")]


def not_a_profile(name: str, profiles: Iterable[str]) -> str:
    """The message for a ``name`` that should be one of ``profiles`` (the key is said apart)."""
    return f"{name!r} is not one of llm.profiles: {sorted(profiles)}"


class LLMParams(Section):
    """``llm``: model profiles, the one in use, the request cache and attempts per request."""

    use: Annotated[StrictStr, Field(min_length=1)]
    cache: PathStr = Field(description="SQLite request cache shared by every LLM stage (not a DVC output)")
    attempts: Positive = Field(description="tries per request before it is kept as a reject")
    failures: Literal["stop", "reject"] = Field(
        description="a request still failing at the server after every retry (5xx, 429, a timeout, no "
        "answer in the body): stop (the stage stops, writing nothing; run again it asks only those) "
        "or reject (kept as a reject, like a bad answer)"
    )
    profiles: dict[ProfileName, Profile] = Field(min_length=1)

    @model_validator(mode="after")
    def _use_is_a_profile(self) -> LLMParams:
        if self.use not in self.profiles:
            raise ParamsError(("use", not_a_profile(self.use, self.profiles)))
        return self

    @property
    def profile(self) -> AnyProfile:
        return self.profiles[self.use]
