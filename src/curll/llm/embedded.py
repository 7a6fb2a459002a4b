"""The embedded default model: a tiny random-weight Llama and a locally trained tokenizer.

A fresh machine has no GPU and no model hub, yet every LLM stage must run end to end.
:func:`build_embedded_model` writes a Hugging Face model folder that
``AutoModelForCausalLM.from_pretrained`` / ``AutoTokenizer.from_pretrained`` load like any
hub model, so the ``transformers`` backend keeps its real loading path:

- tokenizer: byte-level BPE trained on ``corpus`` in well under a second (every byte is in
  the alphabet, so any text encodes), with the ChatML special tokens and chat template
  that SmolLM2 uses (``<|im_start|>role\\n...<|im_end|>``);
- model: ``LlamaForCausalLM`` with random weights from ``torch.manual_seed(seed)``.

Its text is meaningless. Constrained decoding still makes every answer schema-valid JSON,
which is what the pipeline needs to prove each stage. Same inputs give the same files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from curll.artifacts import atomic_dir

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@dataclass(frozen=True)
class TinyLlamaShape:
    """The embedded model's shape (the single source of it)."""

    vocab_size: int = 1024
    hidden: int = 64
    layers: int = 2
    heads: int = 4
    kv_heads: int = 2
    ffn: int = 256
    max_positions: int = 4096


def train_bpe(texts: Iterable[str], vocab_size: int) -> Any:
    """A ``PreTrainedTokenizerFast``: byte-level BPE with ChatML specials, left padding."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(texts, trainer)
    tok = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=bpe,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        padding_side="left",  # decoder-only batches are left-padded so new tokens line up
        model_max_length=1 << 20,
    )
    tok.chat_template = CHAT_TEMPLATE
    return tok


def build_embedded_model(
    corpus: str | Path, out_dir: str | Path, shape: TinyLlamaShape, seed: int
) -> dict[str, Any]:
    """Train the tokenizer on ``corpus`` (a text file), build the model, save both to ``out_dir``.

    The folder is written to a temporary sibling and renamed, so a crash leaves no half
    model. Returns a summary (shape, parameter count) for the stage's metrics.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    lines = Path(corpus).read_text(encoding="utf-8").splitlines()
    tok = train_bpe(lines, shape.vocab_size)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=shape.hidden,
        intermediate_size=shape.ffn,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.kv_heads,
        max_position_embeddings=shape.max_positions,
        tie_word_embeddings=True,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(seed)
    model_cls: Any = LlamaForCausalLM  # untyped in some transformers releases
    model = model_cls(config)
    n_params = sum(p.numel() for p in model.parameters())
    with atomic_dir(out_dir) as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
    return {"shape": asdict(shape), "vocab_size": len(tok), "parameters": n_params, "seed": seed}
