"""Backend for a local Hugging Face causal LM (CPU or GPU), continuously batched, with constrained JSON.

- Loads with ``AutoTokenizer`` / ``AutoModelForCausalLM.from_pretrained`` (a local folder
  or a hub id), so the embedded tiny model, a converted GGUF model and a hub model take
  the same path. Attention is :mod:`curll.llm.attention`'s ``curll_sdpa`` (grouped-query
  attention without copying K/V) where the model supports attention backends.
- Prompts are rendered with the tokenizer's chat template and decoded by
  :class:`~curll.llm.decode.Decoder`: at most ``max_batch`` rows at once, a finished row's
  slot goes to the next request at once, a shared prompt prefix is computed once.
- A request with a JSON schema is decoded under an xgrammar grammar compiled from the
  schema, in the schema's key order: even a random model can only emit schema-valid
  JSON. A row is done as soon as its JSON value closes; a constrained row caught in a
  loop stops early with an error (its JSON could never close in time), which the engine
  retries like any bad answer.
- Sampling is per request and independent of batching (see :mod:`curll.llm.constrained`),
  with the seed taken from the request's content key.
- ``threads`` sets torch's intra-op threads (0 keeps torch's default). On a 2-core
  machine that also runs other work, 1 thread can beat 2 by a wide margin.
- ``model`` (the name stored on every row and in the cache key) is the given name plus a
  fingerprint of the folder's files, so rebuilding a local model never reuses answers of
  the old one, and a tag per setting that changes answers (:func:`curll.llm.identity.tagged`:
  a GPU device, a ``dtype``, ``stop_loops`` off).
- A request whose prompt does not fit the model, or whose schema cannot be compiled,
  gets ``Completion(error=...)``; the rest of its batch is answered.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from curll.llm.constrained import RowSpec
from curll.llm.decode import Decoded, Decoder, DecodeRequest
from curll.llm.hf_tokenizer import load_tokenizer_of
from curll.llm.identity import model_label, request_seed, tagged
from curll.llm.protocol import OnAnswer
from curll.llm.types import ChatRequest, Completion


def _pattern_bounds_length(schema: Any) -> Any:
    """The schema without minLength/maxLength on strings that have a pattern: xgrammar ignores
    them there (with a warning on every compile), so the pattern must bound the length itself."""
    if isinstance(schema, dict):
        has_pattern = "pattern" in schema
        return {
            k: _pattern_bounds_length(v)
            for k, v in schema.items()
            if not (has_pattern and k in ("minLength", "maxLength"))
        }
    if isinstance(schema, list):
        return [_pattern_bounds_length(v) for v in schema]
    return schema


def load_causal_lm(model: str, *, device: str, dtype: str) -> Any:
    """``AutoModelForCausalLM`` in eval mode on ``device``, with ``curll_sdpa`` attention when
    the architecture supports attention backends (else its default)."""
    import torch
    from transformers import AutoModelForCausalLM

    from curll.llm.attention import register
    from curll.llm.hf_logs import no_load_bars

    torch_dtype: Any = "auto" if dtype == "auto" else getattr(torch, dtype)
    with no_load_bars():
        try:
            lm: Any = AutoModelForCausalLM.from_pretrained(
                model, dtype=torch_dtype, attn_implementation=register()
            )
        except ValueError:  # an architecture without the attention interface
            lm = AutoModelForCausalLM.from_pretrained(model, dtype=torch_dtype)
    return lm.to(device).eval()


class TransformersBackend:
    name = "transformers"

    def __init__(
        self,
        model: str,
        *,
        name: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        threads: int = 0,
        max_batch: int = 16,
        stop_loops: bool = True,
        progress: bool = False,
        chat_template: str | None = None,
    ) -> None:
        import torch

        if threads > 0:
            torch.set_num_threads(threads)
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        # a GPU's kernels give other logits than the CPU's, so other samples
        self.model = tagged(model_label(name or model, model), None if device == "cpu" else device,
                            None if dtype == "auto" else f"dtype-{dtype}",
                            None if stop_loops else "no-stop-loops")  # fmt: skip
        self.tokenizer = load_tokenizer_of(model)
        if chat_template is not None:  # the layout the model was trained in, not the folder's
            self.tokenizer.chat_template = chat_template
        self.lm = load_causal_lm(model, device=device, dtype=dtype)
        # logits may be wider than the tokenizer (padded embeddings): masks use the model's width
        self.vocab_size = int(self.lm.get_output_embeddings().weight.shape[0])
        self.max_positions = int(getattr(self.lm.config, "max_position_embeddings", 1 << 30))
        self.stop_loops = stop_loops
        self.progress = progress
        stops = {self.tokenizer.eos_token_id}
        gen_eos = getattr(self.lm.generation_config, "eos_token_id", None)
        stops |= set(gen_eos if isinstance(gen_eos, list) else [gen_eos])
        self.stop_ids = sorted(t for t in stops if t is not None)
        pad = self.tokenizer.pad_token_id
        self.decoder = Decoder(
            self.lm,
            vocab_size=self.vocab_size,
            stop_ids=self.stop_ids,
            device=device,
            max_batch=max_batch,
            pad_id=self.stop_ids[0] if pad is None else pad,
        )
        self._compiler: Any = None
        self._grammars: dict[str, Any] = {}

    def _grammar(self, schema_json: str) -> Any:
        import xgrammar as xgr

        if self._compiler is None:
            info = xgr.TokenizerInfo.from_huggingface(
                self.tokenizer, vocab_size=self.vocab_size, stop_token_ids=self.stop_ids
            )
            self._compiler = xgr.GrammarCompiler(info)
        if schema_json not in self._grammars:
            # compact JSON only: a small model would otherwise wander in white space
            self._grammars[schema_json] = self._compiler.compile_json_schema(
                json.dumps(_pattern_bounds_length(json.loads(schema_json))), any_whitespace=False
            )
        return self._grammars[schema_json]

    def prompt_ids(self, req: ChatRequest) -> list[int]:
        chat = [{"role": m.role, "content": m.content} for m in req.messages]
        text = self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def complete(
        self, requests: Sequence[ChatRequest], on_answer: OnAnswer | None = None
    ) -> list[Completion]:
        """Answers in order; ``on_answer(i, completion)`` as each row finishes decoding."""
        from tqdm.auto import tqdm

        results: list[Completion | None] = [None] * len(requests)
        todo: list[tuple[int, DecodeRequest]] = []
        for i, req in enumerate(requests):
            ids = self.prompt_ids(req)
            max_tokens = req.sampling.max_tokens
            if len(ids) + max_tokens > self.max_positions:
                msg = f"prompt of {len(ids)} tokens + max_tokens {max_tokens} exceeds {self.max_positions}"
                results[i] = Completion(text="", error=msg)
                continue
            try:
                grammar = None if req.schema_json is None else self._grammar(req.schema_json)
            except Exception as exc:  # an unsupported schema fails this request, not the batch
                results[i] = Completion(text="", error=f"schema not compilable: {exc}")
                continue
            s = req.sampling
            seed = request_seed(req, self.model)
            spec = RowSpec(grammar, seed, s.temperature, s.top_p, s.presence_penalty, s.frequency_penalty)
            todo.append((i, DecodeRequest(tuple(ids), max_tokens, spec, self.stop_loops)))
        if todo:
            bar = tqdm(total=len(todo), desc="decode", unit="req", leave=False, disable=not self.progress)
            t0 = time.perf_counter()

            def done(j: int, out: Decoded) -> None:
                i, d = todo[j]
                # a loop is the model's answer, not a failed call: it is stored (a rerun does
                # not decode it again) and the engine rejects it as degenerate
                ans = Completion(
                    text=str(self.tokenizer.decode(out.tokens, skip_special_tokens=True)),
                    prompt_tokens=len(d.prompt),
                    completion_tokens=len(out.tokens) + int(out.finish_reason == "stop"),
                    latency_s=time.perf_counter() - t0,  # since the batch began: rows share the passes
                    finish_reason=out.finish_reason,
                )
                results[i] = ans
                bar.update(1)
                if on_answer is not None:
                    on_answer(i, ans)

            self.decoder.run([d for _, d in todo], on_done=done)
            bar.close()
        return [r for r in results if r is not None]
