"""Where a profile's model is: the folder or GGUF file that ``llm_models.builtin`` names.

:func:`model_source` maps a transformers profile's ``model`` to what the backend loads: the
folder the ``llm_models`` stage built for a built-in name (:mod:`curll.llm.local`), the value
itself otherwise (a folder or a hub id). :func:`gguf_source` does the same for a llamacpp
profile, which needs no conversion: the GGUF file itself. Nothing here builds a model, so the
LLM stages that only load one never import the model code.
"""

from __future__ import annotations

from pathlib import Path

from curll.config.models import GGUFModel, LLMModelsParams
from curll.errors import CurllError


def gguf_path(spec: GGUFModel) -> Path:
    """The GGUF file a spec names (inside its package, or a plain path)."""
    from curll.llm.gguf import packaged_file

    path = packaged_file(spec.package, spec.file) if spec.package else Path(spec.file)
    if not path.is_file():
        raise CurllError("GGUF file not found", file=path, field="file")
    return path


def gguf_source(model: str, models: LLMModelsParams) -> tuple[Path, str | None]:
    """The GGUF file a llamacpp profile's ``model`` names, and the sha256 params expect of it:
    an ``llm_models.builtin`` name of ``kind: gguf`` (checked), else a path (no hash)."""
    spec = models.builtin.get(model)
    if spec is None:
        return Path(model), None
    if not isinstance(spec, GGUFModel):
        raise CurllError(f"llm_models.builtin.{model} is a {spec.kind} model: the llamacpp backend "
                         "needs a GGUF file (kind: gguf)", field=f"llm_models.builtin.{model}")  # fmt: skip
    return gguf_path(spec), spec.sha256


def model_source(model: str, models: LLMModelsParams) -> str:
    """What to load for a transformers profile's ``model``: the built folder of a built-in name
    (an error naming the stage when it has not been built), else ``model`` itself."""
    if model not in models.builtin:
        return model
    folder = Path(models.out.dir) / model
    if not (folder / "config.json").is_file():
        raise CurllError(f"local model {model!r} is not built: run the llm_models stage first", file=folder)
    return str(folder)
