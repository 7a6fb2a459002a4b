"""Benchmark our training loop against the Hugging Face ``Trainer`` (tokens per second).

Same model weights, packed rows, batch, accumulation and AdamW settings on both sides; each
side runs ``--steps`` optimizer steps, alternating, ``--repeats`` times, and the best time
counts. Two baselines:
- ``Trainer(CausalLM)``: HF's loop around our module (same forward, same block-diagonal mask):
  the ratio is loop overhead only;
- ``Trainer(LlamaForCausalLM)``: HF's loop and HF's model loaded from our weights (plain causal
  mask over the packed row, position ids passed): what a user would get without curll
  (its loss shifts our already-shifted labels once more: same compute, different numbers).
Target: ours / baseline >= 1.0. Ratios only, never asserted in tests.

Usage: python -m bench.trainer [--preset smollm2-8m] [--context 256] [--batch 8] [--micro 4]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812

from curll.config import load_params
from curll.model.config import preset
from curll.model.hf import llama_config
from curll.model.llama import CausalLM
from curll.train.data import IGNORE, Doc, Packed, pack
from curll.train.trainer import Settings, train

VOCAB = 4096


def rows(n: int, context: int) -> Packed:
    """Synthetic chat-like documents (30-400 tokens, last 40% trained) packed into ``n`` rows."""
    rng = np.random.default_rng(0)
    docs: list[Doc] = []
    while sum(len(d.tokens) for d in docs) < n * context * 1.05:
        k = int(rng.integers(30, 400))
        docs.append(Doc(rng.integers(5, VOCAB, k).tolist(), [i >= 0.6 * k for i in range(k)]))
    return pack(docs, context, pad_id=0).head(n)


class _Wrapped(torch.nn.Module):
    """Our module with the loss the way ``Trainer`` expects it (a dict with ``loss``)."""

    def __init__(self, model: CausalLM) -> None:
        super().__init__()
        self.inner = model

    def forward(self, input_ids: Any, labels: Any, position_ids: Any, doc_ids: Any) -> dict[str, Any]:
        logits = self.inner(input_ids, position_ids, doc_ids)
        return {"loss": F.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), ignore_index=IGNORE)}


def hf_trainer(
    model: torch.nn.Module, data: Packed, a: argparse.Namespace, out: str, fields: tuple[str, ...]
) -> float:
    from datasets import Dataset
    from transformers import Trainer, TrainingArguments

    o = load_params().train.optim
    ds = Dataset.from_dict({f: getattr(data, f).tolist() for f in fields}).with_format("torch")
    args = TrainingArguments(
        output_dir=out, per_device_train_batch_size=a.micro, gradient_accumulation_steps=a.batch // a.micro,
        max_steps=a.steps, learning_rate=o.lr, adam_beta1=o.beta1, adam_beta2=o.beta2, adam_epsilon=o.eps,
        weight_decay=o.weight_decay, max_grad_norm=o.clip, lr_scheduler_type="constant", save_strategy="no",
        logging_steps=10**6, report_to=[], use_cpu=True, dataloader_num_workers=0, disable_tqdm=True,
        seed=42, remove_unused_columns=False,
    )  # fmt: skip
    trainer = Trainer(model=model, args=args, train_dataset=ds)
    t0 = time.perf_counter()
    trainer.train()
    return time.perf_counter() - t0


def ours(model: CausalLM, data: Packed, a: argparse.Namespace, out: str) -> float:
    s = Settings(batch=a.batch, micro_batch=a.micro, epochs=1, seed=42, checkpoint_every=10**6,
                 log_every=10**6, optim=load_params().train.optim)  # fmt: skip
    t0 = time.perf_counter()
    train(model, data, s, ckpt=Path(out) / "ours.pt", desc="ours")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="smollm2-8m")
    ap.add_argument("--context", type=int, default=256)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--micro", type=int, default=4)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    import torch._dynamo  # AdamW imports it on first use: keep that out of the timings
    from transformers import AutoModelForCausalLM

    data = rows(a.steps * a.batch, a.context)
    tokens = int((data.doc_ids >= 0).sum())
    torch.manual_seed(0)
    init = CausalLM(preset(a.preset, vocab_size=VOCAB)).state_dict()
    best = dict.fromkeys(["ours", "Trainer(CausalLM)", "Trainer(LlamaForCausalLM)"], float("inf"))
    for _ in range(a.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            model = CausalLM(preset(a.preset, vocab_size=VOCAB))
            model.load_state_dict(init)
            best["ours"] = min(best["ours"], ours(model, data, a, tmp))
            model.load_state_dict(init)
            fields = ("input_ids", "labels", "position_ids", "doc_ids")
            t = hf_trainer(_Wrapped(model), data, a, tmp, fields)
            best["Trainer(CausalLM)"] = min(best["Trainer(CausalLM)"], t)
            ids = SimpleNamespace(bos_token_id=1, eos_token_id=2, pad_token_id=0)
            cfg = llama_config(model.config, ids)
            hf = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa")  # type: ignore[no-untyped-call]
            hf.load_state_dict(init)
            t = hf_trainer(hf, data, a, tmp, ("input_ids", "labels", "position_ids"))
            best["Trainer(LlamaForCausalLM)"] = min(best["Trainer(LlamaForCausalLM)"], t)
    print(f"{a.preset}, context {a.context}, batch {a.batch} (micro {a.micro}), {a.steps} steps, "
          f"{tokens} tokens, torch threads {torch.get_num_threads()}, best of {a.repeats}")  # fmt: skip
    for name, secs in best.items():
        ratio = secs / best["ours"]  # = our tokens/s over this one's
        print(f"  {name:<26} {secs:7.2f} s  {tokens / secs:9.0f} tokens/s  ours / this: {ratio:.2f}x")


if __name__ == "__main__":
    main()
