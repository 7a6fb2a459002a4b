"""Build and find the local models that ``llm_models.builtin`` names (see :mod:`curll.config.models`).

:func:`build_local_model` writes one model as a Hugging Face folder: a random tiny Llama
(:mod:`curll.llm.embedded`) or a converted GGUF file (:mod:`curll.llm.gguf`, after its
sha256 is checked). :func:`model_source` maps a profile's ``model`` to what the backend
loads: the built folder for a built-in name, the value itself otherwise (a folder or a
hub id). :func:`gguf_source` does the same for a llamacpp profile, which needs no
conversion: the GGUF file itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curll.config.models import GGUFModel, LLMModelsParams, RandomModel
from curll.errors import CurllError


def gguf_path(spec: GGUFModel) -> Path:
    """The GGUF file a spec names (inside its package, or a plain path)."""
    from curll.llm.gguf import packaged_file

    path = packaged_file(spec.package, spec.file) if spec.package else Path(spec.file)
    if not path.is_file():
        raise CurllError("GGUF file not found", file=path, field="file")
    return path


def build_local_model(name: str, spec: RandomModel | GGUFModel, out_dir: str | Path) -> dict[str, Any]:
    """Write model ``name`` to ``out_dir`` (atomically); returns a summary for the stage's stats."""
    if isinstance(spec, RandomModel):
        from curll.llm.embedded import TinyLlamaShape, build_embedded_model

        shape = TinyLlamaShape(
            spec.vocab_size, spec.hidden, spec.layers, spec.heads, spec.kv_heads, spec.ffn, spec.max_positions
        )
        return {"kind": "random", **build_embedded_model(spec.corpus, out_dir, shape, spec.seed)}
    from curll.llm.gguf import checked_sha256, convert_gguf

    path = gguf_path(spec)
    checked_sha256(path, spec.sha256, name)
    return {"kind": "gguf", "package": spec.package or "", **convert_gguf(path, out_dir)}


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
