"""Chat records -> token documents -> packed rows of ``context`` tokens.

A document (:class:`Doc`) is one record's conversation in the ChatML layout of the
tokenizer's chat template (``<|im_start|>role\\ncontent<|im_end|>\\n`` per message). With
``loss="assistant"`` only the assistant contents and their closing ``<|im_end|>`` are trained
on; ``"all"`` trains on every token. A CQA/CSQA record's user turn is its passage, a blank
line and the question: the passage's tokens are marked as the part that may be cut.

Packing (:func:`pack`) never splits a document: every answer token is trained with its
whole prompt in view. Documents go into rows best-fit decreasing (longest first, each into
the row whose free space it fills most tightly), so rows are nearly full. A document longer
than ``context`` loses the end of its passage, replaced by :data:`CUT` (as test prompts are
cut in evaluation), never its question or answer; one without a passage to cut, or too long
even without its passage, is dropped and counted. Inputs and targets are shifted *inside*
each document (the last token of a document never predicts the first of the next); every
document restarts ``position_ids`` at 0 and has its own ``doc_ids`` value, which the model
uses so that no token attends across a document boundary. Unused slots at the end of a row
are padding (target -100, doc id -1).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

IGNORE = -100
CUT = " ..."  # marks a cut passage (as curll.evaluate.items does for test prompts)
Loss = Literal["assistant", "all"]
PASSAGE_TYPES = frozenset({"cqa", "csqa"})


@dataclass(frozen=True)
class Doc:
    """One conversation: token ids, a trained-on flag per token, and the token span
    [start, end) of a passage that may lose its end (None: nothing may be cut)."""

    tokens: list[int]
    trained: list[bool]
    passage: tuple[int, int] | None = None


@dataclass(frozen=True)
class Packed:
    input_ids: np.ndarray  # (N, T) int64
    labels: np.ndarray  # (N, T) int64: next token, or IGNORE
    position_ids: np.ndarray  # (N, T) int64
    doc_ids: np.ndarray  # (N, T) int64, -1 on padding
    records: int = 0  # documents offered to pack()
    truncated: int = 0  # of those, packed with the end of their passage cut
    dropped: int = 0  # of those, longer than a row even without their passage: left out

    @property
    def rows(self) -> int:
        return int(self.input_ids.shape[0])

    def stats(self) -> dict[str, Any]:
        used = int((self.doc_ids >= 0).sum())
        share = max(1, self.records)
        return {
            "rows": self.rows,
            "tokens": used,
            "loss_tokens": int((self.labels != IGNORE).sum()),
            "packing_efficiency": round(used / max(1, self.doc_ids.size), 4),
            "records": self.records,
            "truncated": round(self.truncated / share, 4),
            "dropped": round(self.dropped / share, 4),
        }


def encode(
    messages_json: Sequence[str], tokenizer: Any, *, loss: Loss, types: Sequence[str] | None = None
) -> list[Doc]:
    """A :class:`Doc` per conversation (JSON lists of {role, content}); ``types`` (the
    records' ``type``) marks the passage of CQA/CSQA user turns as the part that may be cut."""
    pieces: list[str] = []
    flags: list[bool] = []
    cuttable: list[bool] = []
    spans: list[tuple[int, int]] = []
    for i, raw in enumerate(messages_json):
        start = len(pieces)
        has_passage = types is not None and types[i] in PASSAGE_TYPES
        for m in json.loads(raw):
            trained = loss == "all" or m["role"] == "assistant"
            passage, sep, rest = m["content"].rpartition("\n\n")
            if m["role"] == "user" and has_passage and passage:
                content, cut = [passage, sep + rest], [True, False]
            else:
                content, cut = [m["content"]], [False]
            pieces += [f"<|im_start|>{m['role']}\n", *content, "<|im_end|>", "\n"]
            flags += [loss == "all", *[trained] * len(content), trained, loss == "all"]
            cuttable += [False, *cut, False, False]
        spans.append((start, len(pieces)))
    ids = tokenizer(pieces, add_special_tokens=False)["input_ids"]
    docs = []
    for start, end in spans:
        tokens: list[int] = []
        mask: list[bool] = []
        passage_span: tuple[int, int] | None = None
        for piece, flag, may_cut in zip(ids[start:end], flags[start:end], cuttable[start:end], strict=True):
            if may_cut:
                passage_span = (len(tokens), len(tokens) + len(piece))
            tokens += piece
            mask += [flag] * len(piece)
        docs.append(Doc(tokens, mask, passage_span))
    return docs


def fit(doc: Doc, context: int, cut_ids: Sequence[int]) -> Doc | None:
    """``doc`` within ``context`` inputs (its length - 1): unchanged when it fits, else its
    passage's end replaced by ``cut_ids``; None when even that does not fit."""
    over = len(doc.tokens) - 1 - context
    if over <= 0:
        return doc
    if doc.passage is None:
        return None
    start, end = doc.passage
    keep = end - start - over - len(cut_ids)
    if keep < 1:
        return None
    flag = [doc.trained[start]] * len(cut_ids)
    return Doc(
        doc.tokens[: start + keep] + list(cut_ids) + doc.tokens[end:],
        doc.trained[: start + keep] + flag + doc.trained[end:],
        (start, start + keep + len(cut_ids)),
    )


def best_fit(lengths: Sequence[int], context: int) -> list[list[int]]:
    """Rows of document indices, best-fit decreasing: each document (longest first, ties in
    input order) goes into the row whose free space is the smallest that holds it."""
    free_rows: list[list[int]] = [[] for _ in range(context + 1)]  # row ids by free space
    has = np.zeros(context + 1, dtype=bool)
    rows: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lambda j: (-lengths[j], j)):
        n = lengths[i]
        found = int(np.argmax(has[n:])) + n if has[n:].any() else -1
        if found < 0:
            rows.append([])
            row, space = len(rows) - 1, context
        else:
            row, space = free_rows[found].pop(), found
            has[found] = bool(free_rows[found])
        rows[row].append(i)
        free_rows[space - n].append(row)
        has[space - n] = True
    return rows


def pack(docs: Sequence[Doc], context: int, *, pad_id: int, cut_ids: Sequence[int] = ()) -> Packed:
    """Rows of ``context`` positions (see the module docstring); ``cut_ids``: the tokens of
    :data:`CUT`, put where a passage was cut."""
    fitted = [fit(d, context, cut_ids) for d in docs]
    kept = [d for d in fitted if d is not None]
    truncated = sum(1 for d, f in zip(docs, fitted, strict=True) if f is not None and f is not d)
    rows = best_fit([len(d.tokens) - 1 for d in kept], context)
    n = len(rows)
    arrays = {
        "input_ids": np.full((n, context), pad_id, dtype=np.int64),
        "labels": np.full((n, context), IGNORE, dtype=np.int64),
        "position_ids": np.zeros((n, context), dtype=np.int64),
        "doc_ids": np.full((n, context), -1, dtype=np.int64),
    }
    for r, members in enumerate(rows):
        at = 0
        for i in members:
            d = kept[i]
            x = d.tokens[:-1]
            y = [t if m else IGNORE for t, m in zip(d.tokens[1:], d.trained[1:], strict=True)]
            span = slice(at, at + len(x))
            arrays["input_ids"][r, span], arrays["labels"][r, span] = x, y
            arrays["position_ids"][r, span] = np.arange(len(x))
            arrays["doc_ids"][r, span] = i
            at += len(x)
    return Packed(**arrays, records=len(docs), truncated=truncated, dropped=len(docs) - len(kept))
