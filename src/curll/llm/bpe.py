"""A tokenizer trained in place: byte-level BPE with SmolLM2's ChatML specials and chat template.

:func:`train_bpe` trains on any texts in well under a second for a small corpus; every byte is
in the alphabet, so any text encodes. The special tokens and the chat template are SmolLM2's
(``<|im_start|>role\\n...<|im_end|>``), so a model trained with it chats like SmolLM2. The
``tokenizer`` stage trains the models' tokenizer with it (``tokenizer.source: local``) and the
tiny random model of ``llm_models`` has one (:mod:`curll.llm.local`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from curll.layouts import CHAT_TEMPLATE

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


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
