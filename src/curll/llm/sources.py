"""Where a profile's model is: the folder or GGUF file that ``llm_models.builtin`` names.

The ``llm_models@<profile>`` stage writes one folder per profile, :func:`profile_folder`
(``out.dir/<profile>``); a built model is its ``model/`` folder (:func:`built_folder`).
:func:`model_source` maps a transformers (or vLLM) profile's ``model`` to what the backend
loads: that built folder for a built-in name (:mod:`curll.llm.local`), the value itself
otherwise (a folder or a hub id). :func:`gguf_source` does the same for a llamacpp profile,
which needs no conversion: the GGUF file itself. Nothing here builds a model, so the LLM
stages that only load one never import the model code.
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


def profile_folder(profile: str, models: LLMModelsParams) -> Path:
    """The folder the ``llm_models@<profile>`` stage writes (the LLM stages that ask
    ``profile`` depend on it): ``out.dir/<profile>``."""
    return Path(models.out.dir) / profile


def built_folder(profile: str, models: LLMModelsParams) -> Path:
    """Where ``profile``'s built-in model is built: the Hugging Face folder ``<profile folder>/model``."""
    return profile_folder(profile, models) / "model"


def model_source(profile: str, model: str, models: LLMModelsParams) -> str:
    """What to load for ``profile``, whose ``model`` is given: the built folder of a built-in
    name (an error naming the stage to run when it has not been built), else ``model`` itself."""
    if model not in models.builtin:
        return model
    folder = built_folder(profile, models)
    if not (folder / "config.json").is_file():
        raise CurllError(
            f"profile {profile!r}'s model {model!r} is not built: run `dvc repro llm_models@{profile}`",
            file=folder,
        )
    return str(folder)
