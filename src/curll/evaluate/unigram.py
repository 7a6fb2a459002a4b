"""The unigram baseline of the judge-free loss: what a model that knows only token frequencies
scores on the held-out answers.

For a model trained on the answer tokens of some train records, the baseline is the add-one
(Laplace) unigram of those tokens, with the tokenizer's whole vocabulary of size ``V``:

    p(w) = (c(w) + 1) / (N + V)

with ``c(w)`` the count of token ``w`` among the trained-on targets and ``N`` their total. A
held-out record's baseline NLL is the sum, over the very targets :func:`curll.evaluate.nll.
record_nll` scores (the assistant content and its closing ``<|im_end|>``), of ``-ln p(w)``.
With no training tokens (the untrained model) it is ``ln V`` a token: the uniform distribution.

"The answer tokens a model was trained on" are the trained-on targets of the train records of
every stage its data came from (the model's ``seen`` stages, as its order's spec names its
run): stage k for ``independent/k``, stages up to k for ``joint/0..k`` and ``continual/0..k``
(a continual model saw them one after the other; replay only repeats earlier ones).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from curll.train.data import Doc


def targets(doc: Doc) -> np.ndarray:
    """The token ids a document is trained on as next-token targets (int64): every token but the
    first whose ``trained`` flag is set (the first token is never a target)."""
    tokens = np.asarray(doc.tokens, dtype=np.int64)
    flags = np.asarray(doc.trained, dtype=bool)
    return np.asarray(tokens[1:][flags[1:]], dtype=np.int64)


def counts(docs: Sequence[Doc], vocab: int) -> np.ndarray:
    """(vocab,) int64: how often each token id is a trained-on target in ``docs``."""
    out = np.zeros(vocab, dtype=np.int64)
    for d in docs:
        np.add.at(out, targets(d), 1)
    return out


def log_probs(c: np.ndarray) -> np.ndarray:
    """(V,) float64 natural-log probabilities of the add-one unigram of counts ``c`` (length V)."""
    return np.asarray(np.log(c.astype(np.float64) + 1.0) - np.log(float(c.sum()) + len(c)), dtype=np.float64)


def record_nll(docs: Sequence[Doc], logp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(nll, tokens) per document: summed ``-ln p`` over its targets (nats, float64) and their
    number (int64), the layout of :func:`curll.evaluate.nll.record_nll`."""
    nll = np.array([-float(logp[targets(d)].sum()) for d in docs], dtype=np.float64)
    n = np.array([len(targets(d)) for d in docs], dtype=np.int64)
    return nll, n
