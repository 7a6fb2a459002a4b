"""Chat records -> token documents -> packed rows of ``context`` tokens.

A document (:class:`Doc`) is one record's conversation in the ChatML layout of the
tokenizer's chat template (``<|im_start|>role\\ncontent<|im_end|>\\n`` per message). With
``loss="assistant"`` only the assistant contents and their closing ``<|im_end|>`` are trained
on; ``"all"`` trains on every token. A CQA/CSQA record's user turn is its passage, a blank
line and the question: the passage's tokens are marked as the part that may be cut.

Packing (:func:`pack`) never splits a document: every answer token is trained with its
whole prompt in view. Documents go into rows best-fit decreasing (longest first, each into
the row whose free space it fills most tightly), so rows are nearly full. A document longer
than ``context`` loses the end of its passage, replaced by :data:`curll.chat.CUT` (as test prompts are
cut in evaluation), never its question or answer; one without a passage to cut, or too long
even without its passage, is dropped and counted. Inputs and targets are shifted *inside*
each document (the last token of a document never predicts the first of the next); every
document restarts ``position_ids`` at 0 and has its own ``doc_ids`` value, which the model
uses so that no token attends across a document boundary. Unused slots at the end of a row
are padding (target -100, doc id -1). The packed documents live on disk
(:class:`~curll.train.store.DocStore`); rows are made when a batch asks for them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from curll.train.store import DocStore

IGNORE = -100
Loss = Literal["assistant", "all"]


@dataclass(frozen=True)
class Doc:
    """One conversation: token ids, a trained-on flag per token, and the token span
    [start, end) of a passage that may lose its end (None: nothing may be cut)."""

    tokens: list[int]
    trained: list[bool]
    passage: tuple[int, int] | None = None


class Packed:
    """Packed rows, made on demand from a :class:`~curll.train.store.DocStore`: memory grows with
    the number of documents, not of tokens. ``batch(rows)`` gives, for the given rows, the
    (B, T) int64 arrays ``input_ids``, ``labels`` (next token, or IGNORE), ``position_ids`` and
    ``doc_ids`` (-1 on padding); the properties of the same names give every row at once (for
    tests and small held-out sets)."""

    def __init__(
        self, store: DocStore, rows: list[list[int]], doc_ids: list[list[int]], *, context: int,
        pad_id: int, records: int, truncated: int, dropped: int,
    ) -> None:  # fmt: skip
        self.store, self.context, self.pad_id = store, context, pad_id
        self._rows, self._doc_ids = rows, doc_ids  # per row: store ids, and their doc_ids values
        self.records = records  # documents offered to pack()
        self.truncated = truncated  # of those, packed with the end of their passage cut
        self.dropped = dropped  # of those, longer than a row even without their passage: left out
        targets = store.trained_targets
        self._loss = np.array([int(targets[r].sum()) for r in rows], dtype=np.int64).reshape(-1)

    @property
    def rows(self) -> int:
        return len(self._rows)

    def head(self, n: int) -> Packed:
        """The first ``n`` rows (same store), e.g. for a warm-up or a benchmark of fixed size."""
        return Packed(
            self.store, self._rows[:n], self._doc_ids[:n], context=self.context, pad_id=self.pad_id,
            records=self.records, truncated=self.truncated, dropped=self.dropped,
        )  # fmt: skip

    def loss_tokens(self, rows: Sequence[int] | np.ndarray) -> int:
        """Targets that carry a loss in ``rows``."""
        return int(self._loss[np.asarray(rows, dtype=np.int64)].sum())

    def batch(self, rows: Sequence[int] | np.ndarray) -> dict[str, np.ndarray]:
        n, t = len(rows), self.context
        out = {
            "input_ids": np.full((n, t), self.pad_id, dtype=np.int64),
            "labels": np.full((n, t), IGNORE, dtype=np.int64),
            "position_ids": np.zeros((n, t), dtype=np.int64),
            "doc_ids": np.full((n, t), -1, dtype=np.int64),
        }
        for b, r in enumerate(rows):
            at = 0
            for doc, value in zip(self._rows[int(r)], self._doc_ids[int(r)], strict=True):
                tokens, trained = self.store.read(doc)
                span = slice(at, at + len(tokens) - 1)
                out["input_ids"][b, span] = tokens[:-1]
                out["labels"][b, span] = np.where(trained[1:], tokens[1:], IGNORE)
                out["position_ids"][b, span] = np.arange(len(tokens) - 1)
                out["doc_ids"][b, span] = value
                at += len(tokens) - 1
        return out

    def _all(self, name: str) -> np.ndarray:
        return self.batch(range(self.rows))[name]

    input_ids = property(lambda self: self._all("input_ids"))
    labels = property(lambda self: self._all("labels"))
    position_ids = property(lambda self: self._all("position_ids"))
    doc_ids = property(lambda self: self._all("doc_ids"))

    @property
    def documents(self) -> int:
        """Documents in the rows."""
        return sum(len(r) for r in self._rows)

    @property
    def used(self) -> int:
        """Positions holding a document token (inputs: each document's length - 1)."""
        lengths = self.store.lengths
        return int(sum(int(lengths[r].sum()) - len(r) for r in self._rows))

    def stats(self) -> dict[str, Any]:
        return _stats([self])


def _stats(parts: Sequence[Packed]) -> dict[str, Any]:
    """:meth:`Packed.stats` of rows that several packs hold together."""
    rows, used = sum(q.rows for q in parts), sum(q.used for q in parts)
    records = sum(q.records for q in parts)
    share = max(1, records)
    return {
        "rows": rows,
        "tokens": used,
        "loss_tokens": sum(q.loss_tokens(range(q.rows)) for q in parts),
        "packing_efficiency": round(used / max(1, rows * parts[0].context), 4),
        "records": records,
        # a row packs several records: the paper's batch of 1,536 counts records, so its
        # equivalent here is 1536 / documents_per_row rows per step
        "documents_per_row": round(sum(q.documents for q in parts) / max(1, rows), 3),
        "truncated": round(sum(q.truncated for q in parts) / share, 4),
        "dropped": round(sum(q.dropped for q in parts) / share, 4),
    }


class Parts:
    """Several :class:`Packed` (of one ``context`` and ``pad_id``) read as one, e.g. the stages of
    a joint run packed apart so that each row holds one stage's documents: the rows are numbered
    part after part (row r of part j is ``starts[j] + r``); ``labels`` name the parts (their
    stages, ``"0"`` or ``"0-1-2"``). ``rows``, ``loss_tokens``, ``batch`` and ``stats`` are
    :class:`Packed`'s over all the rows."""

    def __init__(self, parts: Sequence[Packed], labels: Sequence[str]) -> None:
        if not parts or len(parts) != len(labels):
            raise ValueError(f"Parts: {len(parts)} parts and {len(labels)} labels")
        self.parts, self.labels = list(parts), list(labels)
        self.starts = np.concatenate([[0], np.cumsum([q.rows for q in parts])]).astype(np.int64)
        self.context = parts[0].context

    @property
    def rows(self) -> int:
        return int(self.starts[-1])

    def part_of(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """The part of each of ``rows``."""
        return np.searchsorted(self.starts, np.asarray(rows, dtype=np.int64), side="right") - 1

    def _split(self, rows: Sequence[int] | np.ndarray) -> list[tuple[np.ndarray, Packed, np.ndarray]]:
        """Per part met: (mask over ``rows``, the part, its own row numbers)."""
        idx = np.asarray(rows, dtype=np.int64)
        part = self.part_of(idx)
        return [(part == j, self.parts[j], idx[part == j] - self.starts[j]) for j in np.unique(part)]

    def loss_tokens(self, rows: Sequence[int] | np.ndarray) -> int:
        return sum(q.loss_tokens(local) for _, q, local in self._split(rows))

    def batch(self, rows: Sequence[int] | np.ndarray) -> dict[str, np.ndarray]:
        if len(self.parts) == 1:
            return self.parts[0].batch(rows)
        out = self.parts[0].batch([])  # (0, T) arrays of the right dtypes
        out = {k: np.empty((len(rows), *v.shape[1:]), dtype=v.dtype) for k, v in out.items()}
        for mask, q, local in self._split(rows):
            for k, v in q.batch(local).items():
                out[k][mask] = v
        return out

    def stats(self) -> dict[str, Any]:
        return _stats(self.parts)


def encode(
    messages_json: Sequence[str], tokenizer: Any, *, loss: Loss, passage_chars: Sequence[int] | None = None
) -> list[Doc]:
    """A :class:`Doc` per conversation (JSON lists of {role, content}); ``passage_chars``: per
    record, the length in characters of the passage its user turn starts with (a type made on
    one, CQA/CSQA, as :meth:`~curll.instances.InstanceType.user_turn` lays it out: the passage, a
    blank line, the question; 0: none). That passage is the part a cut may shorten. It is given,
    not searched for, as a user turn alone cannot tell where a passage with blank lines ends and
    a question with blank lines begins; a turn that does not have the blank line there is not
    cut."""
    pieces: list[str] = []
    flags: list[bool] = []
    cuttable: list[bool] = []
    spans: list[tuple[int, int]] = []
    for i, raw in enumerate(messages_json):
        start = len(pieces)
        chars = passage_chars[i] if passage_chars is not None else 0
        for m in json.loads(raw):
            trained = loss == "all" or m["role"] == "assistant"
            text = m["content"]
            if m["role"] == "user" and chars > 0 and text[chars : chars + 2] == "\n\n":
                content, cut = [text[:chars], text[chars:]], [True, False]
            else:
                content, cut = [text], [False]
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


def pack(
    docs: Iterable[Doc], context: int, *, pad_id: int, cut_ids: Sequence[int] = (),
    order: Sequence[int] | np.ndarray | None = None,
) -> Packed:  # fmt: skip
    """Rows of ``context`` positions (see the module docstring); ``cut_ids``: the tokens of
    :data:`curll.chat.CUT`, put where a passage was cut. ``docs`` is consumed once, one at a time, into a
    :class:`~curll.train.store.DocStore`; ``order`` (default: as given) lists document indices
    in the order to pack them (a document may appear more than once), so documents can be read
    in file order and packed shuffled."""
    store = DocStore()
    ids: list[int] = []  # input index -> store id, or -1 when dropped
    cut: list[bool] = []  # input index -> its passage was cut to fit
    for doc in docs:
        fitted = fit(doc, context, cut_ids)
        cut.append(fitted is not None and fitted is not doc)
        ids.append(-1 if fitted is None else store.append(fitted.tokens, fitted.trained))
    sequence = range(len(ids)) if order is None else [int(i) for i in order]
    kept = [ids[i] for i in sequence if ids[i] >= 0]
    lengths = store.lengths
    rows = best_fit([int(lengths[k]) - 1 for k in kept], context)
    return Packed(
        store, [[kept[i] for i in r] for r in rows], rows, context=context, pad_id=pad_id,
        records=len(sequence), truncated=sum(cut[i] for i in sequence),
        dropped=sum(ids[i] < 0 for i in sequence),
    )  # fmt: skip
