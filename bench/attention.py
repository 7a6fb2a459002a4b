"""Training throughput with document-aware attention against the dense block mask.

Both variants train the same preset on the same packed rows (synthetic documents of 100-700
tokens, best-fit packed, answers on the last 40%) for the same steps, after ``--warmup``
untimed steps. ``mask`` is SDPA with a (B, 1, T, T) boolean block mask (no flash kernel can
take it); ``documents`` is the model's default: flash varlen attention over the documents on a
CUDA GPU in bf16 (the mask elsewhere, so on a CPU both rows measure the same kernel).
Prints tokens/s, MFU (known GPUs, bf16), peak GPU memory, and documents / mask.

    python -m bench.attention --device cuda --preset smollm2-135m --context 1024 --micro-batch 16
    python -m bench.attention --device cuda --preset smollm2-135m --context 1024 --micro-batch 64 \
        --compile --loss-chunk 8192
    python -m bench.attention            # CPU, tiny preset: a smoke run
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import numpy as np
import torch

from curll.config.train import OptimParams
from curll.model.config import preset
from curll.model.llama import CausalLM
from curll.train.data import Doc, Packed, pack
from curll.train.runs import mfu
from curll.train.trainer import Settings, train

OPTIM = OptimParams(lr=1e-3, beta1=0.9, beta2=0.98, eps=1e-8, weight_decay=0.01, clip=1.0,
                    schedule="constant", warmup=0.0, decay=0.2, min_lr_ratio=0.1)  # fmt: skip


def rows(n: int, context: int, vocab: int) -> Packed:
    rng = np.random.default_rng(0)
    docs: list[Doc] = []
    while sum(len(d.tokens) for d in docs) < n * context:
        k = int(rng.integers(100, min(700, context)))
        docs.append(Doc(rng.integers(5, vocab, k).tolist(), [i >= 0.6 * k for i in range(k)]))
    return pack(docs, context, pad_id=0).head(n)


def measure(a: argparse.Namespace, data: Packed, varlen: bool) -> dict[str, float | None]:
    dtype = torch.bfloat16 if a.device == "cuda" else torch.float32
    torch.manual_seed(0)
    model = CausalLM(preset(a.preset, vocab_size=a.vocab))
    model.varlen = varlen
    s = Settings(batch=a.micro_batch, micro_batch=a.micro_batch, epochs=1, seed=0, checkpoint_every=10**9,
                 log_every=10**9, optim=OPTIM, device=a.device, dtype=dtype, compile=a.compile,
                 loss_chunk=a.loss_chunk)  # fmt: skip
    warm = data.head(a.warmup * a.micro_batch)
    with TemporaryDirectory() as tmp:
        train(model, warm, s, ckpt=Path(tmp) / "warm.pt", desc="warm-up")
        (Path(tmp) / "warm.pt").unlink()
        if a.device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        out = train(model, data, s, ckpt=Path(tmp) / "run.pt", desc="attention" if varlen else "mask")
        if a.device == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
    flops = model.config.train_flops(model.num_parameters(), a.context, out.tokens, out.trained)
    return {
        "tokens_per_s": out.tokens / seconds,
        "mfu": mfu(flops / seconds, a.device, dtype),
        "peak_gb": torch.cuda.max_memory_allocated() / 1e9 if a.device == "cuda" else None,
        "loss": out.log[-1]["loss"] if out.log else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--vocab", type=int, default=49152)
    ap.add_argument("--context", type=int, default=256)
    ap.add_argument("--micro-batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--compile", action="store_true", help="torch.compile every decoder layer")
    ap.add_argument("--loss-chunk", type=int, default=0, help="train.loss_chunk (0: the whole output layer)")
    a = ap.parse_args()
    data = rows(a.micro_batch * a.steps, a.context, a.vocab)
    name = torch.cuda.get_device_name() if a.device == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    print(f"{a.preset}, context {a.context}, micro-batch {a.micro_batch}, {a.steps} steps on {name} "
          f"(packing efficiency {data.stats()['packing_efficiency']:.1%})")  # fmt: skip
    res = {label: measure(a, data, varlen) for label, varlen in (("mask", False), ("documents", True))}
    for label, r in res.items():
        mfu_s = f"{r['mfu']:.1%}" if r["mfu"] is not None else "-"
        peak = f"{r['peak_gb']:.1f} GB" if r["peak_gb"] is not None else "-"
        speed = f"{r['tokens_per_s']:>10.0f} tokens/s"
        print(f"  {label:<10} {speed}  MFU {mfu_s:>6}  peak {peak:>8}  loss {r['loss']}")
    ratio = res["documents"]["tokens_per_s"] / res["mask"]["tokens_per_s"]  # type: ignore[operator]
    print(f"  documents / mask: {ratio:.2f}x")


if __name__ == "__main__":
    main()
