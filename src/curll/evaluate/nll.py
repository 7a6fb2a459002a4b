"""A judge-free score: each model's negative log-likelihood of the reference answers.

:func:`record_nll` gives, per record (a chat ending in the assistant turn), the summed
negative log-likelihood (nats) of its answer tokens, the assistant content and its closing
``<|im_end|>`` (in another layout, the answer as that layout ends it), each given everything
before it, and how many such tokens there are. A record is scored on the very tokens the
trainer would train it on: the same encoding (:func:`curll.train.data.encode`; a checkpoint
curll did not train: its layout's, :mod:`curll.evaluate.layouts`), the same passage cut for a
record over ``context`` (:func:`curll.train.data.fit`; one too long even so is not scored:
NaN, 0 tokens, as the trainer drops it), and the same packing with document attention, so no
record sees another.

Rows of ``context`` positions are run ``micro_batch`` at a time, without gradients, in
float32: memory is bounded by ``micro_batch`` rows (their activations, and the logits of their
answer positions), not by the number of records. The values are the same for the same model and
records on the same machine (no sampling; no LLM call).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from curll.chat import CUT
from curll.train.data import fit, pack


def record_nll(
    model: Any, messages: Sequence[str], types: Sequence[str], tokenizer: Any, *, context: int,
    micro_batch: int, device: str = "cpu", layout: str = "curll", passages: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(nll, tokens): float64 (R,) summed nats of each record's answer tokens (NaN when it does
    not fit ``context``) and int64 (R,) how many; ``messages``: RecordSchema ``messages`` JSON,
    ``types``: the records' ``type`` (a CQA/CSQA passage is what a cut shortens); ``layout``:
    the text the model was trained on (:mod:`curll.evaluate.layouts`), whose answer tokens count;
    ``passages``: each record's passage (:func:`curll.evaluate.layouts.encode`: needed when a
    record is of a type made on one). A tokenizer with no padding token pads with its
    end-of-text token (padding is never scored)."""
    import torch
    import torch.nn.functional as F  # noqa: N812

    from curll.evaluate.layouts import encode
    from curll.train.batch import Batch

    docs = encode(layout, messages, types, tokenizer, passages)
    cut = tokenizer(CUT, add_special_tokens=False)["input_ids"]
    kept = np.array([i for i, d in enumerate(docs) if fit(d, context, cut) is not None], dtype=np.int64)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    packed = pack(docs, context, pad_id=pad, cut_ids=cut)  # doc id j: kept[j]
    nll, count = np.zeros(len(kept)), np.zeros(len(kept), dtype=np.int64)
    was_training = model.training
    model.to(device).eval()
    with torch.no_grad():
        for start in range(0, packed.rows, micro_batch):
            b = Batch.of(packed.batch(range(start, min(start + micro_batch, packed.rows))))
            t = b.to(device)
            logits = model(t["input_ids"], t["position_ids"], t["doc_ids"], t["select"],
                           cu_seqlens=t["cu_seqlens"])  # (N, V): the answer positions only  # fmt: skip
            per = F.cross_entropy(logits.float(), t["targets"], reduction="none")  # (N,) nats
            doc = b.doc_ids.reshape(-1)[b.select]  # (N,) the packed document of each position
            np.add.at(nll, doc, per.double().cpu().numpy())
            np.add.at(count, doc, 1)
    model.train(was_training)
    out_nll, out_n = np.full(len(docs), np.nan), np.zeros(len(docs), dtype=np.int64)
    out_nll[kept], out_n[kept] = nll, count
    return out_nll, out_n
