"""A model's tokenizer as every curll path loads it: the backend that answers with a model and
the evaluation that scores it read the same tokens (:func:`load_tokenizer_of`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def load_tokenizer_of(model: str) -> Any:
    """``model``'s tokenizer: a folder's ``tokenizer.json`` read as it is, since a model-specific
    class that its ``tokenizer_config.json`` names (``GPT2Tokenizer``, ``LlamaTokenizerFast``) has
    transformers rebuild the pre-tokenizer from the class, and the model would read tokens it never
    trained on; a hub name or a folder of slow tokenizer files by ``AutoTokenizer``."""
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    if (Path(model) / "tokenizer.json").is_file():
        return PreTrainedTokenizerFast.from_pretrained(model)
    return AutoTokenizer.from_pretrained(model)
