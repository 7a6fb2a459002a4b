"""Chat encoding and packing: loss on answers only, no prediction or attention across documents."""

from __future__ import annotations

import json

import numpy as np
import pytest

from curll.llm.embedded import train_bpe
from curll.train.data import IGNORE, encode, pack


@pytest.fixture(scope="module")
def tok():
    return train_bpe(["Tell me about cats. Cats purr and sleep a lot. What is two plus two? Four."] * 20, 320)


def chat(user: str, answer: str) -> str:
    return json.dumps([{"role": "system", "content": "Be kind."}, {"role": "user", "content": user},
                       {"role": "assistant", "content": answer}])  # fmt: skip


def test_loss_mask_covers_the_answer_and_its_end_marker_only(tok):
    [(ids, mask)] = encode([chat("Tell me about cats.", "Cats purr.")], tok, loss="assistant")
    trained = tok.decode([t for t, m in zip(ids, mask, strict=True) if m])
    assert trained == "Cats purr.<|im_end|>"
    assert tok.decode(ids) == tok.apply_chat_template(
        json.loads(chat("Tell me about cats.", "Cats purr.")), tokenize=False
    )
    [(_, every)] = encode([chat("Tell me about cats.", "Cats purr.")], tok, loss="all")
    assert all(every)


def test_packing_shifts_within_documents_and_resets_positions(tok):
    docs = encode([chat("Tell me about cats.", "Cats purr."), chat("What is two plus two?", "Four.")], tok,
                  loss="assistant")  # fmt: skip
    total = sum(len(t) - 1 for t, _ in docs)
    p = pack(docs, context=16, pad_id=0)
    assert p.input_ids.shape == (-(-total // 16), 16)
    flat = {k: getattr(p, k).reshape(-1) for k in ("input_ids", "labels", "position_ids", "doc_ids")}
    used = flat["doc_ids"] >= 0
    assert used.sum() == total and p.stats()["packing_efficiency"] == round(total / p.input_ids.size, 4)
    # within a segment, the label at i is the input at i + 1; a segment's last label is never
    # the next segment's first input, and positions restart at every segment
    for i in np.flatnonzero(used[:-1]):
        same = flat["doc_ids"][i] == flat["doc_ids"][i + 1]
        if same:
            assert flat["position_ids"][i + 1] == flat["position_ids"][i] + 1
            assert flat["labels"][i] in (IGNORE, flat["input_ids"][i + 1])
        else:
            assert flat["position_ids"][i + 1] == 0
    assert (flat["labels"][~used] == IGNORE).all()
    # the trained targets are exactly both answers (with their end markers)
    targets = [int(t) for t in flat["labels"] if t != IGNORE]
    assert tok.decode(targets) == "Cats purr.<|im_end|>Four.<|im_end|>"
