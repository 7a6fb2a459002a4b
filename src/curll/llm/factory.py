"""Build the backend and engine that a params ``llm`` profile describes.

This is the only place that maps params to backend classes: every LLM stage calls
:func:`engine_from_params` with the name of the profile it asks (``None``: ``llm.use``; split's
rater and each judge name theirs), and evaluation loads the trained models through
:func:`trained_model_backend`. Backends are imported here lazily, so a run on the openai
backend never imports torch, and nothing imports vllm unless a profile asks for it.
"""

from __future__ import annotations

from pathlib import Path

from curll.config import Params
from curll.config.evaluate import InferParams
from curll.config.llm import LlamaCppProfile, LLMParams, OpenAIProfile, TransformersProfile, VLLMProfile
from curll.config.models import LLMModelsParams
from curll.errors import CurllError
from curll.llm.cache import RequestCache
from curll.llm.engine import Engine
from curll.llm.protocol import Backend
from curll.llm.sources import gguf_source, model_source
from curll.llm.tasks import Task, TaskDef
from curll.prompts import load_prompt


def make_backend(llm: LLMParams, *, models: LLMModelsParams, profile: str | None = None) -> Backend:
    """The backend of ``profile`` (default ``llm.use``); a built-in model name loads from the
    folder the ``llm_models@<profile>`` stage built."""
    name = profile or llm.use
    p = llm.profiles[name]
    if isinstance(p, TransformersProfile):
        from curll.llm.transformers_backend import TransformersBackend

        return TransformersBackend(
            model_source(name, p.model, models),
            name=p.model,
            device=p.device,
            dtype=p.dtype,
            threads=p.threads,
            max_batch=p.max_batch,
            stop_loops=p.stop_loops,
        )
    if isinstance(p, OpenAIProfile):
        from curll.llm.openai_backend import OpenAIBackend

        return OpenAIBackend(
            p.model,
            base_url=p.base_url,
            api_key_env=p.api_key_env,
            concurrency=p.concurrency,
            timeout_s=float(p.timeout_s),
            max_retries=p.max_retries,
            backoff_s=float(p.backoff_s),
            json_mode=p.json_mode,
            url_key=f"llm.profiles.{name}.base_url",
        )
    if isinstance(p, LlamaCppProfile):
        from curll.llm.llamacpp_backend import LlamaCppBackend

        path, sha256 = gguf_source(p.model, models)
        return LlamaCppBackend(
            path,
            name=p.model if sha256 else path.name,
            sha256=sha256,
            threads=p.threads,
            servers=p.servers,
            parallel=p.parallel,
            context=p.context,
            timeout_s=float(p.timeout_s),
            stop_loops=p.stop_loops,
        )
    if isinstance(p, VLLMProfile):
        try:
            from curll.llm.vllm_backend import VLLMBackend

            return VLLMBackend(
                model_source(name, p.model, models),
                name=p.model,
                tensor_parallel=p.tensor_parallel,
                data_parallel=p.data_parallel,
                gpu_memory_utilization=float(p.gpu_memory_utilization),
                max_model_len=p.max_model_len,
                dtype=p.dtype,
                seed=p.sampling.seed,
            )
        except ImportError as exc:
            raise CurllError(
                f"vllm is not installed ({exc}): pip install 'curll[vllm]'", field="llm.use"
            ) from None
    raise AssertionError(f"unknown profile {p!r}")


def engine_from_params(
    llm: LLMParams,
    *,
    models: LLMModelsParams,
    desc: str,
    cache: str | Path | None = None,
    profile: str | None = None,
) -> Engine:
    """The engine every LLM stage uses: the backend of ``profile`` (default ``llm.use``), the
    shared cache, the attempts. With ``cache`` (a generate shard's own file) answers are written
    there and the shared ``llm.cache`` is only read. Use it as a context manager (``with
    engine_from_params(...) as engine:``), so a backend that runs servers stops them when the
    stage ends."""
    p = llm.profiles[profile or llm.use]
    return Engine(
        make_backend(llm, models=models, profile=profile),
        RequestCache(llm.cache) if cache is None else RequestCache(cache, base=llm.cache),
        attempts=llm.attempts,
        batch_size=p.batch_size,
        desc=desc,
        usage_log=Path(llm.cache).with_name("usage.jsonl"),
        failures=llm.failures,
    )


def make_task(params: Params, spec: TaskDef, *, profile: str | None = None) -> Task:
    """``spec`` for ``profile`` (default ``llm.use``): its prompt, its schema under the profile's
    ``max_chars``, and the profile's sampling for it (its ``task_sampling`` entry named by the
    prompt file's stem, if any)."""
    p = params.llm.profiles[profile or params.llm.use]
    loaded = load_prompt(spec.prompt(params))
    return Task(loaded, spec.schema(params, p.max_chars), p.sampling_for(loaded.path.stem))


def trained_model_backend(
    folder: str | Path, name: str, p: InferParams, *, chat_template: str | None = None
) -> Backend:
    """The backend that answers test items with a trained model (a Hugging Face folder);
    ``chat_template``: the Jinja prompts are rendered with instead of the folder's own."""
    if p.backend == "vllm":
        from curll.llm.vllm_backend import VLLMBackend

        return VLLMBackend(str(folder), name=name, dtype=p.dtype, seed=p.sampling.seed,
                           chat_template=chat_template)  # fmt: skip
    from curll.llm.transformers_backend import TransformersBackend

    return TransformersBackend(str(folder), name=name, device=p.device, dtype=p.dtype,
                               chat_template=chat_template)  # fmt: skip
