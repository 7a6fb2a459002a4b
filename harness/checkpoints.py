"""Tiny checkpoints as a user downloads them from the Hub: a folder written by transformers'
own ``LlamaForCausalLM.save_pretrained`` with a tokenizer of its own (a byte-level BPE, not
curll's), the shape of SmolLM2 scaled down. Tests score them in the CurLL authors' layout."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: the end-of-text token of the checkpoints' tokenizer (SmolLM2's name for it)
EOS = "<|endoftext|>"


def hub_tokenizer(corpus: Iterable[str], vocab_size: int = 300, *, pad: bool = True) -> Any:
    """A byte-level BPE trained on ``corpus`` (every byte is a token, so any text encodes), as
    a ``PreTrainedTokenizerFast`` with ``EOS`` as its end-of-text token, and as its padding
    token with ``pad`` (without: none, as some released tokenizers have)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())  # fmt: skip
    tok.train_from_iterator(corpus, trainer)
    extra = {"pad_token": EOS} if pad else {}
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, **extra)  # type: ignore[no-untyped-call]


def save_checkpoint(folder: Path, tokenizer: Any, *, seed: int, hidden: int = 32, layers: int = 2) -> Path:
    """A random ``LlamaForCausalLM`` (``seed``) of ``tokenizer``'s vocabulary, tied embeddings
    as SmolLM2's, saved with ``tokenizer`` by transformers into ``folder``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=2048, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)  # fmt: skip
    model = LlamaForCausalLM(config)  # type: ignore[no-untyped-call]
    with torch.no_grad():  # weights larger than the default init: answers differ between seeds
        for p in model.parameters():
            p.normal_(0, 0.2) if p.dim() > 1 else None
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
