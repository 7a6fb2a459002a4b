"""Chat records -> token documents -> packed rows of ``context`` tokens.

A document is one record's conversation in the ChatML layout of the tokenizer's chat
template (``<|im_start|>role\\ncontent<|im_end|>\\n`` per message). With ``loss="assistant"``
only the assistant contents and their closing ``<|im_end|>`` are trained on; ``"all"`` trains
on every token.

Packing (:func:`pack`): documents are laid end to end and cut into rows of ``context``
positions. Inputs and targets are shifted *inside* each document (the last token of a document
never predicts the first of the next). Every document restarts ``position_ids`` at 0 and has
its own ``doc_ids`` value, which the model turns into a block-diagonal causal mask, so no
token attends across a document boundary. A document longer than the space left in a row
continues in the next row as a new segment (positions restart; it cannot see its beginning).
Unused slots at the end are padding (target -100, doc id -1).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

IGNORE = -100
Loss = Literal["assistant", "all"]


@dataclass(frozen=True)
class Packed:
    input_ids: np.ndarray  # (N, T) int64
    labels: np.ndarray  # (N, T) int64: next token, or IGNORE
    position_ids: np.ndarray  # (N, T) int64
    doc_ids: np.ndarray  # (N, T) int64, -1 on padding

    @property
    def rows(self) -> int:
        return int(self.input_ids.shape[0])

    def stats(self) -> dict[str, Any]:
        used = int((self.doc_ids >= 0).sum())
        return {
            "rows": self.rows,
            "tokens": used,
            "loss_tokens": int((self.labels != IGNORE).sum()),
            "packing_efficiency": round(used / max(1, self.doc_ids.size), 4),
        }


def encode(messages_json: Sequence[str], tokenizer: Any, *, loss: Loss) -> list[tuple[list[int], list[bool]]]:
    """(token ids, trained-on flags) per conversation (JSON lists of {role, content})."""
    pieces: list[str] = []
    flags: list[bool] = []
    spans: list[tuple[int, int]] = []
    for raw in messages_json:
        start = len(pieces)
        for m in json.loads(raw):
            trained = loss == "all" or m["role"] == "assistant"
            pieces += [f"<|im_start|>{m['role']}\n", m["content"], "<|im_end|>", "\n"]
            flags += [loss == "all", trained, trained, loss == "all"]
        spans.append((start, len(pieces)))
    ids = tokenizer(pieces, add_special_tokens=False)["input_ids"]
    docs = []
    for start, end in spans:
        tokens: list[int] = []
        mask: list[bool] = []
        for piece, flag in zip(ids[start:end], flags[start:end], strict=True):
            tokens += piece
            mask += [flag] * len(piece)
        docs.append((tokens, mask))
    return docs


def pack(docs: Sequence[tuple[list[int], list[bool]]], context: int, *, pad_id: int) -> Packed:
    """Rows of ``context`` positions (see the module docstring)."""
    inputs: list[int] = []
    targets: list[int] = []
    positions: list[int] = []
    segments: list[int] = []
    seg = 0
    for tokens, mask in docs:
        x, y = tokens[:-1], [t if m else IGNORE for t, m in zip(tokens[1:], mask[1:], strict=True)]
        while x:
            room = context - len(inputs) % context
            inputs += x[:room]
            targets += y[:room]
            positions += range(len(x[:room]))
            segments += [seg] * len(x[:room])
            x, y, seg = x[room:], y[room:], seg + 1
    n = -(-len(inputs) // context)  # ceil
    pad = n * context - len(inputs)

    def arr(values: list[int], fill: int) -> np.ndarray:
        return np.asarray(values + [fill] * pad, dtype=np.int64).reshape(n, context)

    return Packed(arr(inputs, pad_id), arr(targets, IGNORE), arr(positions, 0), arr(segments, -1))
