"""The output layer and loss, whole against in chunks (``train.loss_chunk``): time and memory.

One forward and backward of the 135M preset's output layer (V 49,152, D 576 by default) and
its cross-entropy over N trained positions, best of ``--repeat``. Memory: the bytes kept for
the backward pass (distinct storages, every device), and the peak allocated (CUDA). The
ratios are chunked over whole, measured in the same run.

    python -m bench.loss                                   # CPU, N 4,096
    python -m bench.loss --device cuda --dtype bf16 --positions 32768 --chunk 4096
"""

from __future__ import annotations

import argparse
import time

import torch

from curll.model.loss import output_loss


def measure(a: argparse.Namespace, chunk: int) -> dict[str, float | None]:
    g = torch.Generator(device=a.device).manual_seed(0)
    x = torch.randn(a.positions, a.hidden, device=a.device, generator=g).requires_grad_()
    w = (torch.randn(a.vocab, a.hidden, device=a.device, generator=g) * 0.02).requires_grad_()
    t = torch.randint(0, a.vocab, (a.positions,), device=a.device, generator=g)
    kept: dict[int, int] = {}  # storage address -> bytes (one tensor may be saved by two ops)

    def keep(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        kept[storage.data_ptr()] = storage.nbytes()
        return tensor

    best, cuda = float("inf"), a.device == "cuda"
    for _ in range(a.repeat):
        x.grad = w.grad = None
        kept.clear()
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        amp = torch.autocast(torch.device(a.device).type, dtype=torch.bfloat16, enabled=a.dtype == "bf16")
        with torch.autograd.graph.saved_tensors_hooks(keep, lambda z: z), amp:
            loss = output_loss(x, w, t, chunk)
        loss.backward()  # type: ignore[no-untyped-call]
        if cuda:
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return {
        "seconds": best,
        "kept_gb": sum(kept.values()) / 1e9,
        "peak_gb": torch.cuda.max_memory_allocated() / 1e9 if cuda else None,
        "loss": loss.item() / a.positions,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--positions", type=int, default=4096)
    ap.add_argument("--hidden", type=int, default=576)
    ap.add_argument("--vocab", type=int, default=49152)
    ap.add_argument("--chunk", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    print(f"output layer {a.hidden} x {a.vocab}, {a.positions} positions, {a.dtype} on {a.device}")
    res = {"whole": measure(a, 0), f"chunks of {a.chunk}": measure(a, a.chunk)}
    for label, r in res.items():
        peak = "-" if r["peak_gb"] is None else f"{r['peak_gb']:.2f} GB"
        print(f"  {label:<16} {r['seconds']:7.3f} s  kept for backward {r['kept_gb']:6.2f} GB  "
              f"peak {peak:>8}  loss/position {r['loss']:.5f}")  # fmt: skip
    whole, chunked = res.values()
    time_ratio = chunked["seconds"] / whole["seconds"]  # type: ignore[operator]
    kept_ratio = chunked["kept_gb"] / whole["kept_gb"]  # type: ignore[operator]
    print(f"  chunked / whole: time {time_ratio:.2f}x, kept for backward {kept_ratio:.3f}x")


if __name__ == "__main__":
    main()
