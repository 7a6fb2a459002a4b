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


def load_hf(path: str | Path) -> CausalLM:
    """A Llama-architecture folder's weights in our module (a ValueError when they do not match
    its config)."""
    from safetensors.torch import load_file

    cfg = config_of(path)
    model = CausalLM(cfg)
    missing, unexpected = model.load_state_dict(
        load_file(str(Path(path) / "model.safetensors")), strict=False
    )
    if unexpected or set(missing) - ({TIED} if cfg.tie_embeddings else set()):
        raise ValueError(
            f"{path}: weights do not match the config (missing {missing}, unexpected {unexpected})"
        )
    return model
