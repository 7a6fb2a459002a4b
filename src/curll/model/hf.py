"""Hugging Face format for :class:`~curll.model.llama.CausalLM`: save and load.

:func:`save_hf` writes ``config.json`` (:func:`llama_config`, the one ``LlamaConfig`` of our
model), ``model.safetensors`` and the tokenizer files, atomically;
``AutoModelForCausalLM.from_pretrained`` then gives the same logits as our module (parameter
names are HF's). Every folder of our model is written by it: the trained models, the untrained
baselines and the tiny random model of ``llm_models`` (:mod:`curll.llm.local`).
:func:`load_hf` reads such a folder back into our module (the ``evaluate_loss`` stage scores
the trained models with it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curll.artifacts import atomic_dir
from curll.errors import one_line
from curll.model.config import ModelConfig
from curll.model.llama import CausalLM


def llama_config(cfg: ModelConfig, tokenizer: Any) -> Any:
    """``cfg`` as a ``transformers.LlamaConfig``, with ``tokenizer``'s BOS, EOS and padding ids."""
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=cfg.vocab_size,
        hidden_size=cfg.hidden,
        intermediate_size=cfg.ffn,
        num_hidden_layers=cfg.layers,
        num_attention_heads=cfg.heads,
        num_key_value_heads=cfg.kv_heads,
        rms_norm_eps=cfg.norm_eps,  # type: ignore[arg-type]  # annotated int | None upstream
        rope_theta=cfg.rope_theta,
        max_position_embeddings=cfg.max_positions,
        tie_word_embeddings=cfg.tie_embeddings,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


TIED = "lm_head.weight"  # with tied embeddings, HF stores only model.embed_tokens.weight


def save_hf(model: CausalLM, tokenizer: Any, out: str | Path) -> None:
    """Byte-identical files for identical weights: tensors sorted by name and the tied output
    matrix left out (``safetensors.save_model`` picks which alias of a shared tensor to keep
    in an order that can change between processes, and the folder's bytes name the model in
    the request cache)."""
    from safetensors.torch import save_file

    state = {k: v.detach().to("cpu").contiguous() for k, v in model.state_dict().items()}  # model stays put
    if model.config.tie_embeddings:
        state.pop(TIED)
    with atomic_dir(out) as tmp:
        llama_config(model.config, tokenizer).save_pretrained(tmp)
        save_file(dict(sorted(state.items())), str(tmp / "model.safetensors"), metadata={"format": "pt"})
        tokenizer.save_pretrained(tmp)


def config_of(path: str | Path) -> ModelConfig:
    """The shape of a Llama-architecture folder (ours, or a SmolLM2 checkpoint) from its ``config.json``."""
    from transformers import LlamaConfig

    c: Any = LlamaConfig.from_pretrained(str(path))
    rope_theta = c.rope_theta if hasattr(c, "rope_theta") else c.rope_parameters["rope_theta"]
    return ModelConfig(
        vocab_size=c.vocab_size, hidden=c.hidden_size, layers=c.num_hidden_layers,
        heads=c.num_attention_heads, kv_heads=c.num_key_value_heads, ffn=c.intermediate_size,
        norm_eps=c.rms_norm_eps,
        rope_theta=float(rope_theta), max_positions=c.max_position_embeddings,
        tie_embeddings=bool(c.tie_word_embeddings),
    )  # fmt: skip


def unreadable(folder: Path) -> str:
    """Why ``folder`` is not a model :func:`load_hf` reads as its config means it ("" when it
    is): ``config.json`` of the Llama architecture with nothing our module does not implement
    (rope scaling, another activation, biases, a head size of its own: its loss would be another
    model's), and one ``model.safetensors`` whose tensors are the config's, name for name and
    shape for shape (read from the file's header, not its data; with tied embeddings a stored
    output matrix must equal the embeddings, read in full)."""
    import json

    try:
        c = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "not a model folder (no config.json)"
    except (OSError, ValueError) as exc:
        return f"config.json is not readable JSON ({one_line(exc, 120)})"
    if not isinstance(c, dict):
        return "config.json does not hold a JSON object"
    if c.get("model_type") != "llama":
        kind = c.get("model_type")
        return f"model_type {kind!r} in config.json: only the Llama architecture (SmolLM2's) is read"
    try:
        found = _unsupported(c)
    except (TypeError, AttributeError, ValueError, ZeroDivisionError) as exc:
        return f"config.json holds a value of the wrong type ({type(exc).__name__}: {one_line(exc, 120)})"
    if found:
        return (f"config.json sets {', '.join(found)}, which curll's model does not implement: its loss "
                "would be another model's")  # fmt: skip
    weights = folder / "model.safetensors"
    if not weights.is_file():
        return "no model.safetensors (sharded or .bin weights are not read: save it as one safetensors file)"
    try:
        return _tensor_mismatch(folder, weights)
    except Exception as exc:  # safetensors and transformers raise several unrelated types
        return f"cannot be read ({type(exc).__name__}: {one_line(exc, 160)})"


def _unsupported(c: dict[str, Any]) -> list[str]:
    """The keys of a Llama ``config.json`` set to what our module does not implement."""
    scalings = [c.get("rope_scaling") or {}, c.get("rope_parameters") or {}]
    scaled = any(s.get("rope_type", s.get("type", "default")) not in ("default", None) for s in scalings)
    head = c.get("hidden_size", 0) // c.get("num_attention_heads", 1)
    unsupported = {
        "rope_scaling": scaled,
        "hidden_act": c.get("hidden_act", "silu") not in ("silu", "swish"),  # transformers: one function
        "attention_bias": bool(c.get("attention_bias")),
        "mlp_bias": bool(c.get("mlp_bias")),
        "head_dim": c.get("head_dim") not in (None, head),
    }
    return [k for k, v in unsupported.items() if v]


def _tensor_mismatch(folder: Path, weights: Path) -> str:
    import torch
    from safetensors import safe_open

    cfg = config_of(folder)
    with torch.device("meta"):  # shapes without memory
        want = {k: list(v.shape) for k, v in CausalLM(cfg).state_dict().items()}
    if cfg.tie_embeddings:
        want.pop(TIED, None)
    with safe_open(str(weights), "pt") as f:
        have = {k: list(f.get_slice(k).get_shape()) for k in f.keys()}  # noqa: SIM118
        embed = "model.embed_tokens.weight"
        stored = cfg.tie_embeddings and TIED in have and embed in have  # tied, yet stored: the same matrix?
        if stored and (have[TIED] != have[embed] or not torch.equal(f.get_tensor(TIED), f.get_tensor(embed))):
            return (f"config.json ties the output matrix to the embeddings (tie_word_embeddings), but "
                    f"model.safetensors stores a {TIED} that differs from {embed}, and loaders disagree "
                    f"on which one scores: save it without {TIED}, or untied")  # fmt: skip
    if cfg.tie_embeddings:
        have.pop(TIED, None)  # tied and the same matrix as the embeddings: nothing of its own
    for k in sorted(set(want) | set(have)):
        if k not in have:
            return f"model.safetensors has no {k}, which the config's model needs"
        if k not in want:
            return f"model.safetensors holds {k}, which the config's model has no place for"
        if have[k] != want[k]:
            return f"model.safetensors has {k} of shape {have[k]}, the config's model {want[k]}"
    return ""


def load_hf(path: str | Path) -> CausalLM:
    """A Llama-architecture folder's weights in our module (a ValueError when they do not match
    its config). With tied embeddings a stored output matrix is dropped: :func:`unreadable`
    refuses one that is not the embeddings."""
    from safetensors.torch import load_file

    cfg = config_of(path)
    model = CausalLM(cfg)
    state = load_file(str(Path(path) / "model.safetensors"))
    if cfg.tie_embeddings:
        state.pop(TIED, None)
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or set(missing) - ({TIED} if cfg.tie_embeddings else set()):
        raise ValueError(
            f"{path}: weights do not match the config (missing {missing}, unexpected {unexpected})"
        )
    return model
