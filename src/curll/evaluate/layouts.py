"""Prompts and scored documents in a model's chat layout (:mod:`curll.layouts` declares them).

:func:`messages` is a test item's prompt in a layout; :func:`encode` turns held-out records
(curll's ``messages`` JSON) into the documents the loss is taken on, the loss on the answer's
tokens as the layout ends them; :func:`load_tokenizer` gives a model folder's tokenizer
rendering chats in a layout. Either way the passage is the part a prompt or a record cuts to
fit (:func:`curll.train.data.fit`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curll.chat import record_chat, turns_of, user_turn
from curll.instances import spec
from curll.layouts import layout_of
from curll.train.data import Doc
from curll.train.data import encode as encode_records

if TYPE_CHECKING:
    import pandas as pd


def messages(layout: str, item: dict[str, Any], passage: str) -> list[tuple[str, str]]:
    """An item's prompt (``item``: :mod:`curll.evaluate.items`' row) in ``layout`` on
    ``passage`` (the item's passage, possibly cut)."""
    if layout_of(layout).passage_in_system:
        return [*([("system", passage)] if passage else []), ("user", str(item["question"]))]
    turns = [("system", item["system"])] if item["system"] else []
    return [*turns, ("user", user_turn(item["type"], str(item["question"]), passage))]


def encode(
    layout: str, messages_json: Sequence[str], types: Sequence[str], tokenizer: Any,
    passages: Sequence[str] | None = None,
) -> list[Doc]:  # fmt: skip
    """One :class:`~curll.train.data.Doc` per record (curll's ``messages`` JSON) as ``layout``
    lays it out, the loss on the answer's tokens. ``passages``: each record's passage (its
    unit's passage record's text, as :func:`passages_of` finds it; "" for a type asked on none),
    as a user turn alone cannot tell where a passage with blank lines ends and a question with
    blank lines begins. In curll's layout it is the part of the user turn a cut may shorten; a
    layout with the passage as the system turn lays it out there. They may be left out only when
    no record is of a type made on a passage (a ValueError otherwise)."""
    if passages is None:
        if any(spec(t).on for t in types):
            raise ValueError(f"layout {layout!r}: records of a type made on a passage need their passages")
        passages = [""] * len(types)
    if not layout_of(layout).passage_in_system:
        chars = [len(p) for p in passages]
        return encode_records(messages_json, tokenizer, loss="assistant", passage_chars=chars)
    raw = _untrimmed(tokenizer)
    return [
        _hub_doc(m, kind, p, raw, tokenizer.eos_token_id)
        for m, kind, p in zip(messages_json, types, passages, strict=True)
    ]


def passages_of(meta: pd.DataFrame, passage_texts: Mapping[str, str]) -> list[str]:
    """The passage of each record of ``meta`` (columns ``unit_id``, ``type``): the text of its
    unit's passage record (``passage_texts``: unit id -> text) for a type made on a passage,
    "" otherwise; a ValueError naming the record when its unit has none."""
    out = []
    for rid, unit, kind in zip(meta["record_id"], meta["unit_id"], meta["type"], strict=True):
        if not spec(kind).on:
            out.append("")
        elif unit in passage_texts:
            out.append(passage_texts[unit])
        else:
            raise ValueError(f"record {rid}: no passage record of its unit {unit}")
    return out


#: the authors' system line, before the passage (:data:`curll.layouts.HUB_TEMPLATE`)
_SYSTEM = "<|system|>\n"


def _untrimmed(tokenizer: Any) -> Any:
    """``tokenizer``'s own Rust tokenizer less its post-processor: the same ids for a text without
    special tokens added, and offsets that are each token's own characters (a post-processor with
    ``trim_offsets`` moves them off a token's spaces, so a newline-and-space token across the join
    of prompt and answer would end inside the prompt)."""
    from tokenizers import Tokenizer

    raw = Tokenizer.from_str(tokenizer.backend_tokenizer.to_str())
    raw.post_processor = None
    return raw


def _hub_doc(messages_json: str, kind: str, passage: str, raw: Any, eos_id: int) -> Doc:
    """A record in the authors' text: ``passage`` as the system turn (none when empty), the
    question (the user turn less the passage and the type's label) as the user's. The text is
    tokenized whole (``raw``: :func:`_untrimmed`), as their training read it; character offsets
    then tell the answer's tokens (each holding a character of the answer or its closing newline,
    so a token across the join of prompt and answer is the answer's, whatever prompt text it also
    holds) and the passage's (each within it). No beginning-of-text token is added."""
    _, user, answer = turns_of(messages_json)
    system = f"{_SYSTEM}{passage}\n" if passage else ""
    prompt = f"{system}<|user|>\n{spec(kind).question_of(user, passage)}\n<|assistant|>\n"
    enc = raw.encode(f"{prompt}{answer}\n", add_special_tokens=False)
    offsets: list[tuple[int, int]] = enc.offsets
    span = None
    if passage:  # the passage: what a record over the context loses first
        first, last = len(_SYSTEM), len(_SYSTEM) + len(passage)
        inside = [i for i, (start, end) in enumerate(offsets) if first <= start and end <= last]
        span = (inside[0], inside[-1] + 1) if inside else None
    trained = [end > len(prompt) for _, end in offsets]
    return Doc([*enc.ids, eos_id], [*trained, True], span)


#: a record the scoring check lays out both ways: a passage over two lines, ended by a full stop
_PROBE = ("Sam has one apple.\nHe eats it.", "How many apples has Sam?", "He has one apple.")


def scoring_problem(tokenizer: Any, layout: str) -> str:
    """Why ``tokenizer`` cannot score records in ``layout`` ("" when it can). In curll's layout
    :func:`encode` tokenizes a record piece by piece, as training did (so it knows which tokens
    are the answer's and which the passage's): that is a checkpoint's own text only where the
    pieces' tokens joined are the whole text's, so a tokenizer that adds a space before every
    piece (SentencePiece's ▁, ``add_prefix_space``) or merges across a join (".\n" as one token)
    would be scored on tokens it never trained on. The authors' layout tokenizes the whole text and
    needs a fast tokenizer's character offsets. Either way the record's tokens must be its
    layout's chat template's text tokenized whole."""
    hub = layout_of(layout).passage_in_system
    if hub and not getattr(tokenizer, "is_fast", False):
        return (f"the {layout} layout finds the answer's tokens by character offsets, which only a fast "
                "tokenizer (a tokenizer.json) gives")  # fmt: skip
    passage, question, answer = _PROBE
    record = record_chat("", user_turn("cqa", question, passage), answer)
    doc = encode(layout, [record], ["cqa"], tokenizer, [passage])[0]
    item = {"question": question, "system": "", "type": "cqa"}
    chat = [*messages(layout, item, passage), ("assistant", answer)]
    text = tokenizer.apply_chat_template([{"role": r, "content": c} for r, c in chat], tokenize=False)
    whole = tokenizer(text, add_special_tokens=False)["input_ids"]
    # the authors' layout ends a record with the end-of-text token, which the template's text has not
    tokens = doc.tokens[:-1] if hub else doc.tokens
    if tokens == whole:
        return ""
    if hub:
        return f"the {layout} layout's scored text is not its chat template's: the two must be one text"
    return (f"the tokenizer reads the {layout} layout's pieces otherwise alone than joined (a space it "
            "adds before a piece, or a token across a join): the loss would be taken on other tokens "
            "than the model's text")  # fmt: skip


def load_tokenizer(folder: str | Path, layout: str) -> Any:
    """The tokenizer of a model folder as the backend that answers with it loads it
    (:func:`curll.llm.hf_tokenizer.load_tokenizer_of`: ``tokenizer.json`` as it is),
    rendering chats in ``layout`` (its template replaces the folder's own)."""
    from curll.llm.hf_tokenizer import load_tokenizer_of

    tok = load_tokenizer_of(str(folder))
    tok.chat_template = layout_of(layout).template
    return tok
