"""SmolLM2-135M on CPU: curll's transformers backend against plain ``model.generate``.

Same model, same prompts (the context task rendered for real seeds), same run:

- ``curll b1``: the backend, schema-constrained, one row at a time (``max_batch=1``);
- ``curll b16``: the backend, schema-constrained, 16 rows with continuous batching;
- ``generate b16``: ``model.generate`` on the same 16 prompts at once, left-padded, sampling
  at the same temperature with no constraint.

Tokens/s counts useful tokens: each answer's tokens up to its end (for ``generate``, up to
its end-of-turn token; the steps a finished row keeps decoding in its batch are the cost).
Reports the ratios ``curll b16 / curll b1`` (target >= 4) and ``curll b16 / generate b16``
(target >= 0.75: constraints within 25%). Needs the converted model (``dvc repro llm_models@smollm2-torch``
with that profile in use, as by default, or ``--model FOLDER``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from curll.sampling import Role

ROOT = Path(__file__).resolve().parents[1]


def prompts(n: int) -> list[list[tuple[Role, str]]]:
    """The context task for ``n`` seeds of the built-in taxonomy and word list."""
    import pandas as pd

    from curll.artifacts import records
    from curll.prompts import load_prompt
    from curll.taxonomy import import_taxonomy

    ind = records(import_taxonomy("curll-yaml", [ROOT / "src/curll/resources/taxonomy_builtin.yaml"]).table)
    words = records(pd.read_csv(ROOT / "src/curll/resources/vocab_builtin.csv"))
    prompt = load_prompt(ROOT / "prompts/context.j2")
    kinds = ["short story", "letter to a friend", "diary entry", "poem", "description"]
    return [
        prompt.render(
            **ind[(7 * i) % len(ind)],
            template=kinds[i % len(kinds)],
            word=words[(11 * i) % len(words)]["word"],
            pos="Noun",
            seed_id=f"{i:016x}",
            type="context",
        )
        for i in range(n)
    ]


def run_backend(
    model: str,
    chats: list[list[tuple[Role, str]]],
    max_batch: int,
    max_tokens: int,
    threads: int,
    device: str = "cpu",
) -> Any:
    from curll.config.llm import MaxChars
    from curll.generate.tasks import task_schema
    from curll.llm.transformers_backend import TransformersBackend
    from curll.llm.types import ChatRequest
    from curll.sampling import Sampling

    dtype = "bfloat16" if device == "cuda" else "float32"
    backend = TransformersBackend(model, device=device, dtype=dtype, threads=threads, max_batch=max_batch)
    schema = task_schema("context", MaxChars(long=1500, short=150))
    reqs = [
        ChatRequest.build(c, schema=schema, sampling=Sampling(0.3, 1.0, max_tokens, i))
        for i, c in enumerate(chats)
    ]
    backend.complete(reqs[:1])  # warm up: grammar compile, first allocations
    t0 = time.perf_counter()
    out = backend.complete(reqs)
    seconds = time.perf_counter() - t0
    tokens = sum(c.completion_tokens for c in out)
    finish = {r: sum(c.finish_reason == r for c in out) for r in ("stop", "length", "loop")}
    return {
        "seconds": round(seconds, 2),
        "tokens": tokens,
        "tokens_per_s": round(tokens / seconds, 2),
        "finish": finish,
    }


def run_generate(
    model: str, chats: list[list[tuple[Role, str]]], max_tokens: int, threads: int, device: str = "cpu"
) -> Any:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if threads > 0:
        torch.set_num_threads(threads)
    tok = AutoTokenizer.from_pretrained(model, padding_side="left")
    lm: Any = AutoModelForCausalLM.from_pretrained(
        model, dtype=torch.bfloat16 if device == "cuda" else torch.float32
    )
    lm.to(device).eval()
    texts = [tok.apply_chat_template([{"role": r, "content": c} for r, c in chat], tokenize=False,
                                     add_generation_prompt=True) for chat in chats]  # fmt: skip
    enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
    kwargs = {"max_new_tokens": max_tokens, "do_sample": True, "temperature": 0.3, "top_p": 1.0,
              "pad_token_id": tok.pad_token_id, "eos_token_id": tok.eos_token_id}  # fmt: skip
    with torch.inference_mode():
        lm.generate(**tok(texts[:1], return_tensors="pt", add_special_tokens=False).to(device),
                    **{**kwargs, "max_new_tokens": 4})  # fmt: skip
        torch.manual_seed(0)
        t0 = time.perf_counter()
        seqs = lm.generate(**enc, **kwargs)
        seconds = time.perf_counter() - t0
    new = seqs[:, enc["input_ids"].shape[1] :].tolist()
    tokens = sum((row.index(tok.eos_token_id) + 1) if tok.eos_token_id in row else len(row) for row in new)
    return {"seconds": round(seconds, 2), "tokens": tokens, "tokens_per_s": round(tokens / seconds, 2),
            "decode_steps": len(new[0])}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=str(ROOT / "data/models/llm/smollm2-torch/model"))
    ap.add_argument("--n", type=int, default=16, help="prompts (and the batch size)")
    ap.add_argument("--max-tokens", type=int, default=192)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = ap.parse_args()
    chats = prompts(args.n)
    report: dict[str, Any] = {"model": args.model, "prompts": args.n, "max_tokens": args.max_tokens,
                              "threads": args.threads}  # fmt: skip
    a = (args.max_tokens, args.threads, args.device)
    report["curll b1"] = run_backend(args.model, chats, 1, *a)
    report["curll b16"] = run_backend(args.model, chats, args.n, *a)
    report["generate b16"] = run_generate(args.model, chats, *a)
    b1, b16, plain = (report[k]["tokens_per_s"] for k in ("curll b1", "curll b16", "generate b16"))
    report["batch16_over_batch1"] = f"{b16 / b1:.2f}x (target >= 4)"
    report["constrained_over_plain"] = f"{b16 / plain:.2f}x (target >= 0.75)"
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
