"""Chat encoding and packing: loss on answers only, no prediction or attention across documents."""

from __future__ import annotations

import json

import numpy as np
import pytest

from curll.chat import CUT
from curll.llm.bpe import train_bpe
from curll.train.data import IGNORE, best_fit, encode, fit, pack


@pytest.fixture(scope="module")
def tok():
    return train_bpe(["Tell me about cats. Cats purr and sleep a lot. What is two plus two? Four."] * 20, 320)


def chat(user: str, answer: str) -> str:
    return json.dumps([{"role": "system", "content": "Be kind."}, {"role": "user", "content": user},
                       {"role": "assistant", "content": answer}])  # fmt: skip


def cqa(passage: str, question: str, answer: str) -> str:
    return chat(f"{passage}\n\nQuestion: {question}", answer)


def test_loss_mask_covers_the_answer_and_its_end_marker_only(tok):
    [doc] = encode([chat("Tell me about cats.", "Cats purr.")], tok, loss="assistant")
    trained = tok.decode([t for t, m in zip(doc.tokens, doc.trained, strict=True) if m])
    assert trained == "Cats purr.<|im_end|>" and doc.passage is None
    assert tok.decode(doc.tokens) == tok.apply_chat_template(
        json.loads(chat("Tell me about cats.", "Cats purr.")), tokenize=False
    )
    [every] = encode([chat("Tell me about cats.", "Cats purr.")], tok, loss="all")
    assert all(every.trained)


def test_a_cqa_passage_is_marked_and_encodes_as_the_whole_turn(tok):
    passage = "Cats purr.\n\nCats sleep a lot."
    raw = cqa(passage, "What do cats do?", "Purr.")
    [doc] = encode([raw], tok, loss="assistant", passage_chars=[len(passage)])
    [plain] = encode([raw], tok, loss="assistant")
    assert doc.tokens == plain.tokens and plain.passage is None
    start, end = doc.passage  # type: ignore[misc]
    assert tok.decode(doc.tokens[start:end]) == passage


def test_a_question_with_a_blank_line_is_never_part_of_the_passage(tok):
    """Found by the passage's length, not by the last blank line of the turn."""
    passage, question = "Cats purr.\n\nCats sleep a lot.", "Read this.\n\nWhat do cats do?"
    [doc] = encode([cqa(passage, question, "Purr.")], tok, loss="assistant", passage_chars=[len(passage)])
    start, end = doc.passage  # type: ignore[misc]
    assert tok.decode(doc.tokens[start:end]) == passage
    [odd] = encode([cqa(passage, question, "Purr.")], tok, loss="assistant", passage_chars=[len(passage) - 1])
    assert odd.passage is None  # no blank line where the passage should end: nothing is cut


def segments(p) -> dict[int, tuple[int, list[int], list[int], list[int]]]:
    """doc id -> (row, inputs, positions, labels), asserting each doc lies in one row, contiguous."""
    out = {}
    for r in range(p.rows):
        for d in sorted(set(p.doc_ids[r].tolist()) - {-1}):
            at = np.flatnonzero(p.doc_ids[r] == d)
            assert d not in out, f"document {d} is split over rows"
            assert (np.diff(at) == 1).all()
            out[d] = (
                r,
                p.input_ids[r, at].tolist(),
                p.position_ids[r, at].tolist(),
                p.labels[r, at].tolist(),
            )
    return out


def test_documents_are_never_split_and_every_answer_sees_its_whole_prompt(tok):
    """Today's defect: documents laid end to end and cut at the row length, so the rest of a
    record started a row without its prompt and its answer tokens were still trained."""
    raws = [chat("Tell me about cats.", "Cats purr and sleep a lot."), chat("What is two plus two?", "Four."),
            chat("Tell me about cats.", "Cats purr."),
            chat("What is two plus two?", "Four, two plus two.")] * 3  # fmt: skip
    docs = encode(raws, tok, loss="assistant")
    context = max(len(d.tokens) for d in docs) + 3
    p = pack(docs, context=context, pad_id=0)
    assert p.records == len(docs) and p.dropped == p.truncated == 0
    segs = segments(p)
    assert len(segs) == len(docs)
    for i, (_, inputs, positions, labels) in segs.items():
        d = docs[i]
        assert inputs == d.tokens[:-1] and positions == list(range(len(inputs)))  # from its first token
        assert labels == [t if m else IGNORE for t, m in zip(d.tokens[1:], d.trained[1:], strict=True)]
    assert (p.labels[p.doc_ids < 0] == IGNORE).all()
    total = sum(len(d.tokens) - 1 for d in docs)
    assert p.stats()["tokens"] == total and p.stats()["packing_efficiency"] == round(
        total / p.doc_ids.size, 4
    )
    for packed in (p, pack(docs, context=4 * context, pad_id=0)):  # documents counted from the rows
        per_row = [len(set(row[row >= 0].tolist())) for row in packed.doc_ids]
        assert packed.stats()["documents_per_row"] == round(sum(per_row) / len(per_row), 3)
    assert p.stats()["documents_per_row"] == 1.0 and max(per_row) > 1


def test_best_fit_decreasing_fills_rows_tightly():
    # longest first, each into the tightest row: 7 | 6 | 5, then 4 -> the 6's row,
    # 3 -> the 7's, 3 and 2 -> the 5's
    assert best_fit([6, 5, 4, 3, 2, 7, 3], context=10) == [[5, 3], [0, 2], [1, 6, 4]]


def test_a_long_record_loses_the_end_of_its_passage_never_its_question_or_answer(tok):
    passage = " ".join(["Cats purr and sleep a lot."] * 30)
    long_cqa = cqa(passage, "What do cats do?", "They purr.")
    long_ir = chat("Tell me about cats. " * 40, "Cats purr.")
    docs = encode([long_cqa, long_ir, chat("Tell me about cats.", "Cats purr.")], tok, loss="assistant",
                  passage_chars=[len(passage), 0, 0])  # fmt: skip
    cut = tok(CUT, add_special_tokens=False)["input_ids"]
    context = len(docs[0].tokens) // 2
    p = pack(docs, context=context, pad_id=0, cut_ids=cut)
    assert (p.records, p.truncated, p.dropped) == (3, 1, 1)
    assert p.stats()["truncated"] == round(1 / 3, 4) and p.stats()["dropped"] == round(1 / 3, 4)
    _row, inputs, _, labels = segments(p)[0]
    text = tok.decode(inputs)
    assert len(inputs) <= context and text.startswith("<|im_start|>system")
    assert text.count("Cats purr and sleep") < 30 and CUT + "\n\nQuestion: What do cats do?" in text
    assert tok.decode([t for t in labels if t != IGNORE]) == "They purr.<|im_end|>"
    assert fit(docs[1], context, cut) is None  # no passage to cut: dropped, counted
