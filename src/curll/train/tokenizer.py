"""The tokenizer the models are trained with: local byte-level BPE or a named hub tokenizer.

``local``: :func:`curll.llm.bpe.train_bpe` (ChatML specials and chat template) on the
text of every message of the train records. ``hub``: ``AutoTokenizer.from_pretrained(name)``
(e.g. ``HuggingFaceTB/SmolLM2-135M``, whose vocabulary has the ChatML tokens), given curll's
ChatML template (:data:`curll.layouts.CHAT_TEMPLATE`): the models are trained on that text
(:func:`curll.train.data.encode`), and a hub template can add what training never saw (a default
system turn), which the trained models' prompts would then hold.

:func:`save_tokenizer` writes the folder atomically (a fast tokenizer: ``tokenizer.json`` and
its config); :func:`load_tokenizer` reads such a folder back, and a missing, truncated or
otherwise unreadable ``tokenizer.json`` is a one-line CurllError naming it, not a traceback.
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
        from curll.layouts import CHAT_TEMPLATE

        tok.chat_template = CHAT_TEMPLATE  # the layout training encodes, not the hub model's own
        return tok
    from curll.llm.bpe import train_bpe

    return train_bpe(texts(messages_json), p.vocab_size)


#: the file that holds a fast tokenizer's vocabulary, merges and specials
TOKENIZER_FILE = "tokenizer.json"


def load_tokenizer(folder: str | Path) -> Any:
    """``AutoTokenizer.from_pretrained(folder)`` for a folder :func:`save_tokenizer` wrote (the
    tokenizer stage's output, or a saved model's folder); never a hub name."""
    path = Path(folder) / TOKENIZER_FILE
    if not path.is_file():
        raise CurllError("tokenizer not found (run the tokenizer stage: dvc repro tokenizer)", file=path)
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    try:  # the file alone first, so that its error names it
        Tokenizer.from_file(str(path))
    except Exception as exc:  # the Rust library raises a bare Exception for a bad or cut file
        raise CurllError(f"not a readable tokenizer ({_one_line(exc)}); run the tokenizer stage again",
                         file=path) from None  # fmt: skip
    try:
        return AutoTokenizer.from_pretrained(str(folder))
    except Exception as exc:  # a damaged config beside it: transformers raises many types
        why = f"not a loadable tokenizer folder ({_one_line(exc)}); run the tokenizer stage again"
        raise CurllError(why, file=folder) from None


def _one_line(exc: Exception, limit: int = 200) -> str:
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def save_tokenizer(tok: Any, out: str | Path) -> dict[str, Any]:
    with atomic_dir(out) as tmp:
        tok.save_pretrained(tmp)
    return {"vocab_size": len(tok)}
