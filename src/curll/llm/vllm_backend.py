"""Backend for in-process vLLM offline batching on GPUs (optional extra: ``pip install curll[vllm]``).

- ``vllm`` is imported only when this backend is built; nothing else needs it.
- ``tensor_parallel`` GPUs serve one engine (``tensor_parallel_size``); with
  ``data_parallel = n > 1`` the backend starts n worker processes, worker r seeing GPUs
  ``r*tp .. r*tp+tp-1`` (``CUDA_VISIBLE_DEVICES``), and splits every batch between them.
  The workers are not daemonic, since vLLM starts processes of its own, which a daemonic
  process may not. Only its worker holds the far end of each worker's pipe, so a worker
  that dies is an error naming it, never a hang; a worker whose engine fails to load
  reports that error, and the backend stops the others and raises it.
- :meth:`VLLMBackend.close` frees the GPUs for the next model: the workers are told to stop
  (each shuts its engine down) and joined, and one still running after
  :data:`STOP_TIMEOUT_S` is terminated; an in-process engine is shut down (vLLM's engine
  core), dropped, and vLLM's ``cleanup_dist_env_and_memory`` (garbage collection, CUDA
  cache) run. Workers of a backend never closed are stopped the same way when the
  interpreter exits, before Python waits for its child processes.
- A schema becomes vLLM structured outputs (``StructuredOutputsParams(json=...)``, vLLM >= 0.11),
  in its task's key order; the engine validates the answer either way.
- Sampling is per request, with a seed drawn from the request's content key (as the
  transformers backend does), so answers do not depend on batching or on the other requests.
- A local model folder's name carries a fingerprint of its files (``path@fingerprint``), so
  cached answers of an older model in the same folder are never reused.
- A request vLLM refuses (a prompt longer than the model, say) fails alone: when a batch
  raises, its requests are asked one by one and only the failing ones get ``error``.
- Chat templates are the model's own (``LLM.chat``).
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing as mp
import os
import sys
import time
from collections.abc import Sequence
from multiprocessing.util import Finalize
from typing import Any

from curll.errors import CurllError
from curll.llm.identity import model_label, request_seed, tagged
from curll.llm.types import ChatRequest, Completion

#: seconds :meth:`VLLMBackend.close` waits for its workers to shut their engines down
#: before it terminates those still running
STOP_TIMEOUT_S = 60.0


def _sampling_params(req: ChatRequest, seed: int) -> Any:
    import json

    import vllm
    from vllm.sampling_params import StructuredOutputsParams

    kwargs: dict[str, Any] = {
        "temperature": req.sampling.temperature,
        "top_p": req.sampling.top_p,
        "max_tokens": req.sampling.max_tokens,
        "seed": seed,
        "presence_penalty": req.sampling.presence_penalty,
        "frequency_penalty": req.sampling.frequency_penalty,
    }
    if req.schema_json is not None:
        kwargs["structured_outputs"] = StructuredOutputsParams(json=json.loads(req.schema_json))
    return vllm.SamplingParams(**kwargs)


def _shut_down(llm: Any) -> None:
    """Stop what ``llm`` (a ``vllm.LLM``) runs: ``LLM.shutdown()`` where vLLM has it, else
    its engine core's ``shutdown()`` (which ends the engine's processes); nothing when it
    has neither."""
    shutdown = getattr(llm, "shutdown", None)
    if not callable(shutdown):
        core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        shutdown = getattr(core, "shutdown", None)
    if callable(shutdown):
        shutdown()


def _free_memory() -> None:
    """Give back the memory of engines no longer referenced: vLLM's own cleanup (its
    distributed state, garbage collection, the CUDA cache) where it has one, else garbage
    collection and ``torch.cuda.empty_cache()``."""
    try:
        from vllm.distributed import cleanup_dist_env_and_memory
    except ImportError:
        gc.collect()
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            torch.cuda.empty_cache()
    else:
        cleanup_dist_env_and_memory()


class _Engine:
    """One vLLM engine in this process."""

    def __init__(self, model: str, engine_args: dict[str, Any], name: str) -> None:
        import vllm

        args = dict(engine_args)
        self.chat_template: str | None = args.pop("chat_template", None)  # an argument of chat(), not LLM()
        self.llm: Any = vllm.LLM(model=model, **args)
        self.name = name  # the model's name in cache keys (and seeds)

    def complete(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        if self.llm is None:
            raise RuntimeError("the vllm engine is closed")
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
        outputs = self.llm.chat(chats, params, use_tqdm=False, chat_template=self.chat_template)
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

    def close(self) -> None:
        """Shut the engine down and free its memory (idempotent)."""
        llm, self.llm = self.llm, None
        if llm is None:
            return
        _shut_down(llm)
        del llm  # the last reference: the engine's memory is free once collected
        _free_memory()


def _worker(rank: int, gpus: str, model: str, engine_args: dict[str, Any], name: str, conn: Any) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = gpus
    try:
        engine = _Engine(model, engine_args, name)
    except BaseException as exc:
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        raise
    conn.send(("ready", ""))
    try:
        while True:
            try:
                batch = conn.recv()
            except EOFError:  # the parent is gone
                break
            if batch is None:
                break
            conn.send(engine.complete(batch))
    finally:
        engine.close()


def _stop_workers(conns: list[Any], procs: list[Any]) -> None:
    """Tell every worker to stop, then join each; one still running after
    :data:`STOP_TIMEOUT_S` (all together) is terminated."""
    for conn in conns:
        with contextlib.suppress(OSError):  # a worker that is gone already
            conn.send(None)
        conn.close()
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for proc in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            proc.terminate()
            proc.join(10)
        if proc.is_alive():
            proc.kill()
            proc.join()
    conns.clear()
    procs.clear()


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
        chat_template: str | None = None,
    ) -> None:
        # ``name``: what it is called instead of its path; ``vllm``: another engine (its own
        # sampler and kernels) than the transformers backend on the same folder
        dtype_tag = None if dtype == "auto" else f"dtype-{dtype}"
        self.model = tagged(model_label(name or model, model), "vllm", dtype_tag)
        args: dict[str, Any] = {
            "tensor_parallel_size": tensor_parallel,
            "gpu_memory_utilization": gpu_memory_utilization,
            "dtype": dtype,
            "seed": seed,
        }
        if chat_template is not None:  # the layout the model was trained in, not the folder's
            args["chat_template"] = chat_template
        if max_model_len is not None:
            args["max_model_len"] = max_model_len
        self._local: _Engine | None = None
        self._conns: list[Any] = []
        self._procs: list[Any] = []
        self._gpus: list[str] = []
        if data_parallel == 1:
            self._local = _Engine(model, args, self.model)
            return
        # run before Python joins its child processes at exit (multiprocessing's exit hook)
        self._stop: Finalize[None] = Finalize(
            self, _stop_workers, args=(self._conns, self._procs), exitpriority=10
        )
        ctx = mp.get_context("spawn")
        try:
            for rank in range(data_parallel):
                gpus = ",".join(str(g) for g in range(rank * tensor_parallel, (rank + 1) * tensor_parallel))
                parent, child = ctx.Pipe()
                proc = ctx.Process(
                    target=_worker,
                    args=(rank, gpus, model, args, self.model, child),
                    name=f"vllm-worker-{rank}",
                )
                proc.start()
                child.close()  # the worker holds the only copy: if it dies, recv() ends with EOF
                self._conns.append(parent)
                self._procs.append(proc)
                self._gpus.append(gpus)
            for rank in range(data_parallel):
                status, detail = self._recv(rank)  # wait until every engine has loaded
                if status != "ready":
                    raise CurllError(
                        f"vllm worker {rank} (GPUs {self._gpus[rank]}) failed to load {model}: {detail}"
                    )
        except BaseException:
            self.close()
            raise

    def _recv(self, rank: int) -> Any:
        try:
            return self._conns[rank].recv()
        except EOFError:
            proc = self._procs[rank]
            proc.join(10)
            raise CurllError(
                f"vllm worker {rank} (GPUs {self._gpus[rank]}) exited (exit code {proc.exitcode}) "
                "without answering: see its error above"
            ) from None

    def complete(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        if self._local is not None:
            return self._local.complete(requests)
        if not self._conns:
            raise RuntimeError("the vllm backend is closed")
        n = len(self._conns)
        parts = [list(requests[r::n]) for r in range(n)]  # round robin keeps parts balanced
        for conn, part in zip(self._conns, parts, strict=True):
            conn.send(part)
        answers = [self._recv(r) for r in range(n)]
        out: list[Completion | None] = [None] * len(requests)
        for r, part_answers in enumerate(answers):
            for j, c in enumerate(part_answers):
                out[r + j * n] = c
        return [c for c in out if c is not None]

    def close(self) -> None:
        """Stop the workers or the in-process engine and free their GPUs (idempotent)."""
        if self._local is not None:
            self._local.close()
            self._local = None
        if self._procs or self._conns:
            self._stop()
