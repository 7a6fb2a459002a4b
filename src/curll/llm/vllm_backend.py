"""Backend for in-process vLLM offline batching on GPUs (optional extra: ``pip install curll[vllm]``).

- ``vllm`` is imported only when this backend is built; nothing else needs it.
- ``tensor_parallel`` GPUs serve one engine (``tensor_parallel_size``); with
  ``data_parallel = n > 1`` the backend starts n worker processes, worker r seeing GPUs
  ``r*tp .. r*tp+tp-1`` (``CUDA_VISIBLE_DEVICES``), and splits every batch between them.
- A schema becomes vLLM structured outputs (``StructuredOutputsParams(json=...)``, or
  ``GuidedDecodingParams`` on vLLM < 0.10.2), in its task's key order; the engine
  validates the answer either way.
- Sampling is per request, with a seed drawn from the request's content key (as the
  transformers backend does), so answers do not depend on batching or on the other requests.
- A local model folder's name carries a fingerprint of its files (``path@fingerprint``), so
  cached answers of an older model in the same folder are never reused.
- A request vLLM refuses (a prompt longer than the model, say) fails alone: when a batch
  raises, its requests are asked one by one and only the failing ones get ``error``.
- Chat templates are the model's own (``LLM.chat``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from collections.abc import Sequence
from typing import Any

from curll.llm.identity import model_label, request_seed
from curll.llm.types import ChatRequest, Completion


def _sampling_params(req: ChatRequest, seed: int) -> Any:
    import json

    import vllm

    kwargs: dict[str, Any] = {
        "temperature": req.sampling.temperature,
        "top_p": req.sampling.top_p,
        "max_tokens": req.sampling.max_tokens,
        "seed": seed,
        "presence_penalty": req.sampling.presence_penalty,
        "frequency_penalty": req.sampling.frequency_penalty,
    }
    if req.schema_json is not None:
        schema = json.loads(req.schema_json)
        try:
            from vllm.sampling_params import StructuredOutputsParams

            kwargs["structured_outputs"] = StructuredOutputsParams(json=schema)
        except ImportError:  # vLLM < 0.10.2
            from vllm.sampling_params import GuidedDecodingParams

            kwargs["guided_decoding"] = GuidedDecodingParams(json=schema)
    return vllm.SamplingParams(**kwargs)


class _Engine:
    """One vLLM engine in this process."""

    def __init__(self, model: str, engine_args: dict[str, Any], name: str) -> None:
        import vllm

        self.llm = vllm.LLM(model=model, **engine_args)
        self.name = name  # the model's name in cache keys (and seeds)

    def complete(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        try:
            return self._chat(requests)
        except Exception as exc:
            if len(requests) == 1:
                return [Completion(text="", error=f"vllm refused the request: {exc}")]
        return [c for r in requests for c in self.complete([r])]  # find the one that fails

    def _chat(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        chats = [[{"role": m.role, "content": m.content} for m in r.messages] for r in requests]
        params = [_sampling_params(r, request_seed(r, self.name)) for r in requests]
        t0 = time.perf_counter()
        outputs = self.llm.chat(chats, params, use_tqdm=False)
        latency = (time.perf_counter() - t0) / max(1, len(requests))
        done = []
        for out in outputs:
            gen = out.outputs[0]
            done.append(
                Completion(
                    text=gen.text,
                    prompt_tokens=len(out.prompt_token_ids or []),
                    completion_tokens=len(gen.token_ids),
                    latency_s=latency,
                    finish_reason=str(gen.finish_reason or ""),
                )
            )
        return done


def _worker(rank: int, gpus: str, model: str, engine_args: dict[str, Any], name: str, conn: Any) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = gpus
    engine = _Engine(model, engine_args, name)
    conn.send(("ready", rank))
    while (batch := conn.recv()) is not None:
        conn.send(engine.complete(batch))


class VLLMBackend:
    name = "vllm"

    def __init__(
        self,
        model: str,
        *,
        tensor_parallel: int = 1,
        data_parallel: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        dtype: str = "auto",
        seed: int = 0,
        name: str | None = None,
    ) -> None:
        self.model = model_label(name or model, model)  # ``name``: what it is called instead of its path
        args: dict[str, Any] = {
            "tensor_parallel_size": tensor_parallel,
            "gpu_memory_utilization": gpu_memory_utilization,
            "dtype": dtype,
            "seed": seed,
        }
        if max_model_len is not None:
            args["max_model_len"] = max_model_len
        self._local: _Engine | None = None
        self._conns: list[Any] = []
        if data_parallel == 1:
            self._local = _Engine(model, args, self.model)
            return
        ctx = mp.get_context("spawn")
        for rank in range(data_parallel):
            gpus = ",".join(str(g) for g in range(rank * tensor_parallel, (rank + 1) * tensor_parallel))
            parent, child = ctx.Pipe()
            ctx.Process(
                target=_worker, args=(rank, gpus, model, args, self.model, child), daemon=True
            ).start()
            self._conns.append(parent)
        for conn in self._conns:
            conn.recv()  # wait until every engine has loaded

    def complete(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        if self._local is not None:
            return self._local.complete(requests)
        n = len(self._conns)
        parts = [list(requests[r::n]) for r in range(n)]  # round robin keeps parts balanced
        for conn, part in zip(self._conns, parts, strict=True):
            conn.send(part)
        answers = [conn.recv() for conn in self._conns]
        out: list[Completion | None] = [None] * len(requests)
        for r, part_answers in enumerate(answers):
            for j, c in enumerate(part_answers):
                out[r + j * n] = c
        return [c for c in out if c is not None]

    def close(self) -> None:
        for conn in self._conns:
            conn.send(None)
        self._conns = []
