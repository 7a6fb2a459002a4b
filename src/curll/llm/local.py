"""Build the local models that ``llm_models.builtin`` names (see :mod:`curll.config.models`).

:func:`build_local_model` writes one model as a Hugging Face folder, atomically:

- ``kind: random`` (:func:`build_embedded_model`): our Llama (:mod:`curll.model`, the model
  the train stage trains) at the tiny shape the params name (:func:`model_config`), its
  weights drawn by :func:`~curll.model.llama.from_seed` (:data:`INIT`) and written by
  :func:`~curll.model.hf.save_hf`, with a byte-level BPE tokenizer trained on the params'
  corpus (:func:`curll.llm.bpe.train_bpe`: ChatML specials and chat template). A fresh
  machine has no GPU and no model hub, yet every LLM stage must run end to end: the folder
  loads with ``AutoModelForCausalLM`` / ``AutoTokenizer.from_pretrained`` like any hub model,
  so the ``transformers`` backend keeps its real loading path. Its text is meaningless;
  constrained decoding still makes every answer schema-valid JSON, which is what the pipeline
  needs to prove each stage. Same inputs give the same files.
- ``kind: gguf``: a GGUF file converted by :func:`curll.llm.gguf.convert_gguf`, after its
  sha256 is checked.

Where a built model is found: :mod:`curll.llm.sources`.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from curll.config.models import GGUFModel, RandomModel
from curll.model.config import Init, ModelConfig

#: small weights (std 0.02, as Hugging Face draws a fresh Llama's): near-uniform next-token
#: probabilities, so sampling spreads over the vocabulary
INIT: Init = "normal"


def model_config(spec: RandomModel) -> ModelConfig:
    """The shape a ``kind: random`` model's params name (``vocab_size``: the BPE's target)."""
    return ModelConfig(vocab_size=spec.vocab_size, hidden=spec.hidden, layers=spec.layers, heads=spec.heads,
                       kv_heads=spec.kv_heads, ffn=spec.ffn, max_positions=spec.max_positions)  # fmt: skip


def build_embedded_model(
    corpus: str | Path, out_dir: str | Path, cfg: ModelConfig, seed: int
) -> dict[str, Any]:
    """Train the tokenizer on ``corpus`` (a text file) to ``cfg.vocab_size`` tokens, draw the
    model of shape ``cfg`` (with the tokenizer's actual vocabulary) from ``seed``, and save both
    to ``out_dir``. Returns a summary (shape, parameter count) for the stage's metrics."""
    from curll.llm.bpe import train_bpe
    from curll.model.hf import save_hf
    from curll.model.llama import from_seed

    tok = train_bpe(Path(corpus).read_text(encoding="utf-8").splitlines(), cfg.vocab_size)
    model = from_seed(replace(cfg, vocab_size=len(tok)), INIT, seed)
    save_hf(model, tok, out_dir)
    return {"shape": asdict(model.config), "vocab_size": len(tok), "parameters": model.num_parameters(),
            "seed": seed}  # fmt: skip


def build_local_model(name: str, spec: RandomModel | GGUFModel, out_dir: str | Path) -> dict[str, Any]:
    """Write model ``name`` to ``out_dir`` (atomically); returns a summary for the stage's stats."""
    if isinstance(spec, RandomModel):
        summary = build_embedded_model(spec.corpus, out_dir, model_config(spec), spec.seed)
        return {"kind": "random", **summary}
    from curll.llm.gguf import checked_sha256, convert_gguf
    from curll.llm.sources import gguf_path

    path = gguf_path(spec)
    checked_sha256(path, spec.sha256, name)
    return {"kind": "gguf", "package": spec.package or "", **convert_gguf(path, out_dir)}
