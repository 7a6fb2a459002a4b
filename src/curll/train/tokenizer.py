"""The tokenizer the models are trained with: local byte-level BPE or a named hub tokenizer.

``local``: :func:`curll.llm.bpe.train_bpe` (ChatML specials and chat template) on the
text of every message of the train records. ``hub``: ``AutoTokenizer.from_pretrained(name)``
(e.g. ``HuggingFaceTB/SmolLM2-135M``, whose vocabulary has the ChatML tokens).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from curll.artifacts import atomic_dir
from curll.config.train import TokenizerParams
from curll.errors import CurllError


def texts(messages_json: Iterable[str]) -> Iterable[str]:
    for raw in messages_json:
        for m in json.loads(raw):
            yield m["content"]


def build_tokenizer(p: TokenizerParams, messages_json: Iterable[str]) -> Any:
    if p.source == "hub":
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(p.name)
        missing = [t for t in ("<|im_start|>", "<|im_end|>") if t not in tok.get_vocab()]
        if missing:
            raise CurllError(
                f"tokenizer {p.name!r} lacks the ChatML tokens {missing}", field="tokenizer.name"
            )
        return tok
    from curll.llm.bpe import train_bpe

    return train_bpe(texts(messages_json), p.vocab_size)


def save_tokenizer(tok: Any, out: str | Path) -> dict[str, Any]:
    with atomic_dir(out) as tmp:
        tok.save_pretrained(tmp)
    return {"vocab_size": len(tok)}
