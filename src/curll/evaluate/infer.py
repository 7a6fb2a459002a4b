"""Trained models answer the test items, through the LLM engine (cache, provenance, rejects).

:func:`answer` asks one model folder (Hugging Face format) every item with the sampling of
``evaluate.infer`` (the paper: temperature 0.7, top-p 0.95, 128 new tokens, seeded), one
model in memory at a time: its backend is closed (a vLLM engine shut down, its GPU memory
freed) before :func:`answer` returns or raises, so the next model has the memory. With
``repeats`` (``evaluate.repeats``) k, every item is asked k times, repeat r sampled with the
seed + r (repeat 0's requests are those of a single answer, so they stay cached when k
changes). Backends: ``transformers`` (batched, CPU or GPU) or ``vllm`` (GPU).
Requests are cached by content, and a model's name carries a fingerprint of its weights, so
a rerun with the same models costs nothing and a retrained model is asked again.

Output rows (:data:`ANSWER_COLUMNS`): ``item_id``, ``run`` (the model's name, e.g.
``seed-42/continual/0-1``), ``repeat`` (0 to k - 1), ``order`` (independent | joint |
continual | untrained), ``seed``,
``trained_to`` (-1 for the untrained model), ``answer`` (raw text; empty when rejected), ``truncated``
(the passage was cut to fit), then the provenance columns of :func:`curll.llm.tasks.provenance`.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from curll.artifacts import records
from curll.config.evaluate import InferParams
from curll.errors import CurllError
from curll.evaluate.items import fit_prompt
from curll.llm.cache import RequestCache
from curll.llm.engine import Engine
from curll.llm.factory import trained_model_backend
from curll.llm.tasks import Answer, provenance
from curll.llm.types import ChatRequest
from curll.sampling import Sampling
from curll.train.orders import SavedModel

#: version of the test-prompt layout (:func:`curll.chat.user_turn`): change the tag
#: when the layout changes, so cached answers to the old prompts are not reused
_TAG = "curll.evaluate.items/test-prompt/1"
PROMPT_VERSION = hashlib.sha256(_TAG.encode()).hexdigest()[:16]


def prompt_version(layout: str) -> str:
    """The request tag of prompts in ``layout``: :data:`PROMPT_VERSION` for curll's, another for
    each other layout (its template is applied inside the backend, out of the request's key)."""
    if layout == "curll":
        return PROMPT_VERSION
    return hashlib.sha256(f"{_TAG}/{layout}".encode()).hexdigest()[:16]


ANSWER_COLUMNS = ["item_id", "run", "repeat", "order", "seed", "trained_to", "answer", "truncated"]


#: the name every answering model goes by (with its folder's fingerprint): the weights, not the run
WEIGHTS = "model"


def answer(
    model: SavedModel, items: pd.DataFrame, p: InferParams, cache: str | Path, repeats: int = 1
) -> pd.DataFrame:
    """``repeats`` rows per item: ``model`` answering it, repeat r (all items of repeat 0 first,
    then of 1, ...) sampled with ``p.sampling``'s seed + r, its prompts in ``model.layout`` with
    the folder's tokenizer. Every item's prompt must fit ``p.prompt_tokens``
    (:func:`curll.evaluate.items.drop_unfit` removes the others first). The backend knows the
    model as :data:`WEIGHTS` and its folder's fingerprint, not as its run: an answer is a function
    of the weights, the prompt and the seed, so two runs of the same weights (every order's
    stage-0 model of a seed) give the same answers, and the second reads them from the cache."""
    from curll.evaluate.layouts import load_tokenizer
    from curll.layouts import layout_of

    folder, name = model.folder, model.name
    tok = load_tokenizer(folder, model.layout)
    fitted = []
    for item in records(items):
        fit = fit_prompt(item, tok, p.prompt_tokens, model.layout)
        if fit is None:
            why = f"item {item['item_id']}: prompt over {p.prompt_tokens} tokens even with its passage cut"
            raise CurllError(why, file=folder, field="evaluate.infer.prompt_tokens")
        fitted.append(fit)
    rows: list[dict[str, Any]] = []
    # leaving the engine closes its backend: the model leaves memory (a vLLM engine its GPUs)
    # before the next model loads, on an error too
    backend = trained_model_backend(folder, WEIGHTS, p, chat_template=layout_of(model.layout).template)
    with Engine(backend, RequestCache(cache), attempts=1,
                batch_size=p.batch_size, desc=f"answer {name}") as engine:  # fmt: skip
        for repeat in range(repeats):  # one engine run a repeat: repeat 0's batches are those of k = 1
            sampling = repeat_sampling(p.sampling.to_sampling(), repeat)
            version = prompt_version(model.layout)
            requests = [ChatRequest.build(msgs, sampling=sampling, prompt_version=version)  # type: ignore[arg-type]
                        for msgs, _ in fitted]  # fmt: skip
            results = engine.run(requests)
            for item_id, (_, cut), req, res in zip(items["item_id"], fitted, requests, results, strict=True):
                text = res.text if res.status == "ok" else ""
                rows.append({"item_id": item_id, "run": name, "repeat": repeat, "order": model.order,
                             "seed": model.seed, "trained_to": model.trained_to,
                             "answer": text, "truncated": cut, **provenance(Answer(req, res))})  # fmt: skip
    return pd.DataFrame(rows)


def repeat_sampling(sampling: Sampling, repeat: int) -> Sampling:
    """``sampling`` of repeat ``repeat``: its seed + ``repeat`` (repeat 0: ``sampling`` itself;
    no seed stays none)."""
    if repeat == 0 or sampling.seed is None:
        return sampling
    return replace(sampling, seed=sampling.seed + repeat)
