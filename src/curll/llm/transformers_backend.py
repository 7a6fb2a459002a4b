"""Backend for a local Hugging Face causal LM (CPU or GPU), batched, with constrained JSON.

- Loads with ``AutoTokenizer`` / ``AutoModelForCausalLM.from_pretrained`` (a local folder
  or a hub id), so the embedded tiny model and a real hub model take the same path.
- Prompts are rendered with the tokenizer's chat template and left-padded, so the new
  tokens of every row start at the same position.
- A request with a JSON schema is decoded under an xgrammar grammar compiled from the
  schema: even a random model can only emit schema-valid JSON (it can still run out of
  ``max_tokens``, which the engine records as a reject).
- Sampling is per request and independent of batching (see :mod:`curll.llm.constrained`),
  with the seed taken from the request's content key.
- ``model`` (the name stored on every row and in the cache key) is the given name plus a
  fingerprint of the folder's files, so rebuilding a local model never reuses answers of
  the old one.
- A request whose prompt does not fit the model, or whose schema cannot be compiled,
  gets ``Completion(error=...)``; the rest of its batch is answered.
"""

from __future__ import annotations

import hashlib
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from curll.llm.constrained import ConstrainedSampler, RowSpec
from curll.llm.types import ChatRequest, Completion

_HEAD = 1 << 20  # bytes hashed at each end of a weight file


def fingerprint(folder: Path) -> str:
    """12 hex chars identifying a local model folder's content.

    Config and tokenizer files are hashed whole; weight files (possibly many GB) by name,
    size and their first and last MiB, which any retraining or re-initialisation changes.
    """
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(path.relative_to(folder).as_posix().encode())
        size = path.stat().st_size
        h.update(str(size).encode())
        with path.open("rb") as f:
            if size <= 2 * _HEAD or path.suffix in {".json", ".txt", ".model"}:
                h.update(f.read())
            else:
                h.update(f.read(_HEAD))
                f.seek(size - _HEAD)
                h.update(f.read(_HEAD))
    return h.hexdigest()[:12]


class TransformersBackend:
    name = "transformers"

    def __init__(
        self, model: str, *, name: str | None = None, device: str = "auto", dtype: str = "auto"
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        folder = Path(model)
        label = name or model
        self.model = f"{label}@{fingerprint(folder)}" if folder.is_dir() else label
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        torch_dtype: Any = "auto" if dtype == "auto" else getattr(torch, dtype)
        self.device = device
        self.tokenizer = AutoTokenizer.from_pretrained(model, padding_side="left")
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        lm: Any = AutoModelForCausalLM.from_pretrained(model, dtype=torch_dtype)
        self.lm = lm.to(device).eval()
        # logits may be wider than the tokenizer (padded embeddings): masks use the model's width
        self.vocab_size = int(self.lm.get_output_embeddings().weight.shape[0])
        self.max_positions = int(getattr(self.lm.config, "max_position_embeddings", 1 << 30))
        self._compiler: Any = None
        self._grammars: dict[str, Any] = {}

    def complete(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        out: list[Completion | None] = [None] * len(requests)
        groups: dict[int, list[int]] = defaultdict(list)  # one generate() per max_tokens value
        for i, req in enumerate(requests):
            groups[req.sampling.max_tokens].append(i)
        for max_tokens, idx in groups.items():
            for i, c in zip(idx, self._generate([requests[i] for i in idx], max_tokens), strict=True):
                out[i] = c
        return [c for c in out if c is not None]

    def _grammar(self, schema_json: str) -> Any:
        import xgrammar as xgr

        if self._compiler is None:
            info = xgr.TokenizerInfo.from_huggingface(self.tokenizer, vocab_size=self.vocab_size)
            self._compiler = xgr.GrammarCompiler(info)
        if schema_json not in self._grammars:
            # compact JSON only: a random model would otherwise wander in white space
            self._grammars[schema_json] = self._compiler.compile_json_schema(
                schema_json, any_whitespace=False
            )
        return self._grammars[schema_json]

    def _generate(self, reqs: Sequence[ChatRequest], max_tokens: int) -> list[Completion]:
        import torch

        results: list[Completion | None] = [None] * len(reqs)
        prompts, rows, live = [], [], []
        for i, req in enumerate(reqs):
            chat = [{"role": m.role, "content": m.content} for m in req.messages]
            text = self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            n_prompt = len(self.tokenizer(text, add_special_tokens=False)["input_ids"])
            if n_prompt + max_tokens > self.max_positions:
                msg = f"prompt of {n_prompt} tokens + max_tokens {max_tokens} exceeds {self.max_positions}"
                results[i] = Completion(text="", error=msg)
                continue
            try:
                grammar = None if req.schema_json is None else self._grammar(req.schema_json)
            except Exception as exc:  # an unsupported schema fails this request, not the batch
                results[i] = Completion(text="", error=f"schema not compilable: {exc}")
                continue
            seed = int(hashlib.sha256(req.key(self.model).encode()).hexdigest()[:15], 16)
            rows.append(RowSpec(grammar, seed, req.sampling.temperature, req.sampling.top_p))
            prompts.append(text)
            live.append(i)
        if live:
            t0 = time.perf_counter()
            enc = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(
                self.device
            )
            sampler = ConstrainedSampler(rows, self.vocab_size)
            with torch.inference_mode():
                seqs = self.lm.generate(
                    **enc,
                    max_new_tokens=max_tokens,
                    do_sample=False,  # sampling happens in ConstrainedSampler (Gumbel-max)
                    logits_processor=[sampler],
                    pad_token_id=self.tokenizer.pad_token_id,
                    eos_token_id=self.tokenizer.eos_token_id,
                    temperature=None,
                    top_p=None,
                    top_k=None,
                )
            latency = (time.perf_counter() - t0) / len(live)
            new = seqs[:, enc["input_ids"].shape[1] :].tolist()
            n_prompt_tokens = enc["attention_mask"].sum(dim=1).tolist()
            eos, pad = self.tokenizer.eos_token_id, self.tokenizer.pad_token_id
            for i, ids, n_in in zip(live, new, n_prompt_tokens, strict=True):
                stopped = eos in ids
                ids = ids[: ids.index(eos)] if stopped else ids
                ids = [t for t in ids if t != pad]
                results[i] = Completion(
                    text=str(self.tokenizer.decode(ids, skip_special_tokens=True)),
                    prompt_tokens=int(n_in),
                    completion_tokens=len(ids) + int(stopped),
                    latency_s=latency,
                    finish_reason="stop" if stopped else "length",
                )
        return [r for r in results if r is not None]
