"""What names a model and a request's randomness, shared by the local backends (no heavy imports).

- :func:`fingerprint`: 12 hex characters of a local model folder's content, appended to the
  model's name (``name@fingerprint``) so that rebuilding or retraining a model never reuses
  cached answers of the old one.
- :func:`tagged`: the backend settings that change answers, appended to that name
  (``+no-stop-loops``), so answers made under one setting are never served under another.
- :func:`request_seed`: a request's sampling seed, drawn from its content key (prompt, schema,
  sampling and model), so an answer does not depend on batching or on the other requests.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from curll.llm.types import ChatRequest

_HEAD = 1 << 20  # bytes hashed at each end of a weight file


def model_label(name: str, model: str | Path) -> str:
    """The model's name on every row and in every cache key: ``name@<fingerprint>`` for a local
    folder (so new weights never reuse old answers), else ``name`` (a hub id pins no content)."""
    folder = Path(model)
    return f"{name}@{fingerprint(folder)}" if folder.is_dir() else name


def tagged(label: str, *settings: str | None) -> str:
    """``label`` with each setting that changes answers appended as ``+setting`` (None: left
    out). A backend names a setting only where it differs from the backend's default, so the
    default label, and the answers cached under it, stay as they were."""
    return label + "".join(f"+{s}" for s in settings if s)


def fingerprint(folder: Path) -> str:
    """12 hex chars identifying a local model folder's content.

    Config and tokenizer files are hashed whole; weight files (possibly many GB) by name,
    size and their first and last MiB, which any retraining or re-initialisation changes.
    Hidden files and folders are not content: the Hub client's download records
    (``.cache/huggingface/``, with the time of the download) would make one model two.
    """
    h = hashlib.sha256()
    content = [p for p in folder.rglob("*") if p.is_file() and not _hidden(p.relative_to(folder))]
    for path in sorted(content):
        h.update(path.relative_to(folder).as_posix().encode())
        size = path.stat().st_size
        h.update(str(size).encode())
        with path.open("rb") as f:
            if size <= 2 * _HEAD or path.suffix in {".json", ".txt", ".model"}:
                h.update(f.read())
            else:
                h.update(f.read(_HEAD))
                f.seek(size - _HEAD)
                h.update(f.read(_HEAD))
    return h.hexdigest()[:12]


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def request_seed(request: ChatRequest, model: str) -> int:
    """A 60-bit seed from ``request``'s cache key under ``model`` (its name with fingerprint)."""
    return int(hashlib.sha256(request.key(model).encode()).hexdigest()[:15], 16)
