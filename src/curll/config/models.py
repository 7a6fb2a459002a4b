"""The ``llm_models`` section: local LLMs that a profile can name.

A profile's ``model`` may be one of ``llm_models.builtin``'s names. For a ``transformers`` or
``vllm`` profile in use (``llm.use``, ``split.rater`` or one of ``evaluate.judges``), the
``llm_models@<profile>`` stage builds that model into ``out.dir/<profile>/model`` (a Hugging
Face folder) before any LLM stage asks it; a ``llamacpp`` profile serves a ``kind: gguf``
file as it is.

- ``kind: random``: our Llama (:mod:`curll.model`, the model the train stage trains) at the
  shape its fields name, random weights from ``seed``, with a byte-level BPE tokenizer
  trained on ``corpus``. Its text is meaningless; tests and CI use it because it costs nothing.
- ``kind: gguf``: a GGUF file converted once (weights dequantised to float32, the
  tokenizer rebuilt from the file's own vocabulary). ``file`` is a path, or with
  ``package`` a file inside that installed Python package (found without importing it).
  ``sha256`` is checked, so another file (a new package release) is an error until the
  param changes, and changing the param reruns the stage.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictStr, model_validator

from curll.config.base import PathStr, Positive, Section, Seed


class RandomModel(Section):
    kind: Literal["random"]
    corpus: PathStr = Field(description="text file the tokenizer is trained on")
    vocab_size: Annotated[int, Field(ge=300, le=65536)]
    hidden: Positive
    layers: Positive
    heads: Positive
    kv_heads: Positive
    ffn: Positive
    max_positions: Positive
    seed: Seed

    @model_validator(mode="after")
    def _heads_divide(self) -> RandomModel:
        if self.hidden % self.heads or self.heads % self.kv_heads:
            raise ValueError("hidden must be a multiple of heads, and heads of kv_heads")
        return self


class GGUFModel(Section):
    kind: Literal["gguf"]
    package: Annotated[StrictStr, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")] | None = None
    file: PathStr
    sha256: Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]


LocalModel = Annotated[RandomModel | GGUFModel, Field(discriminator="kind")]


class LLMModelsOutputs(Section):
    dir: PathStr = Field(description="one folder per profile: <dir>/<profile> (source.json, model/)")
    stats: PathStr = Field(description="a folder of metrics: <stats>/<profile>.json")


class LLMModelsParams(Section):
    """``llm_models``: the built-in local models, by name, and where the stage writes them."""

    builtin: dict[Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")], LocalModel]
    out: LLMModelsOutputs
