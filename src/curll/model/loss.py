"""The output layer and its cross-entropy, whole or in chunks of positions.

Whole, the N trained positions' logits (N, V) exist at once, and more than once: the matmul's
result in the compute dtype, its float32 copy and the float32 log-softmax kept for backward.
For the 135M preset (V = 49,152) and a micro-batch of 64 rows of 1,024 with a third of the
positions trained, that is over 10 GB (2 + 4 + 4 bytes for each of 1.07G logits under bf16
autocast), all of it read and written several times.

In chunks (:func:`output_loss` with ``chunk`` > 0), a chunk of positions at a time goes
through the layer, the loss and, when a gradient is wanted, its backward at once: softmax
minus the one-hot target is the gradient of the logits, from which the gradients of the
hidden states and the weight follow by two matmuls. Only those gradients, (N, D) and (V, D),
wait for the backward pass, which merely scales them by the incoming gradient. Memory for the
logits is ``chunk`` x V; the FLOPs are the same (three matmuls of N x D x V either way).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812 (the usual torch alias)


def output_loss(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, chunk: int = 0) -> torch.Tensor:
    """Summed cross-entropy (nats, float32, 0-dim) of the logits ``x @ weight.T`` against
    ``targets``: x (N, D), weight (V, D), targets (N,) int64. ``chunk`` > 0: at most that
    many positions' logits at once (see the module docstring); 0: all at once."""
    if chunk <= 0 or len(x) <= chunk:
        return F.cross_entropy(F.linear(x, weight).float(), targets, reduction="sum")
    if torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad):
        out: torch.Tensor = _ChunkedLoss.apply(x, weight, targets, chunk)  # type: ignore[no-untyped-call]
        return out
    return sum(
        (output_loss(x[i : i + chunk], weight, targets[i : i + chunk]) for i in range(0, len(x), chunk)),
        torch.zeros((), device=x.device),
    )


class _ChunkedLoss(torch.autograd.Function):
    """Loss and both gradients, a chunk of positions at a time, in the forward pass."""

    @staticmethod
    def forward(
        ctx: Any, x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, chunk: int
    ) -> torch.Tensor:
        grad_x = torch.empty_like(x)
        grad_w = torch.zeros(weight.shape, dtype=torch.float32, device=weight.device)
        total = torch.zeros((), dtype=torch.float32, device=x.device)
        for i in range(0, len(x), chunk):
            xc, tc = x[i : i + chunk], targets[i : i + chunk]
            raw = F.linear(xc, weight)  # (c, V), in the compute dtype (bf16 under autocast)
            dtype, logits = raw.dtype, raw.float()
            del raw
            lse = torch.logsumexp(logits, dim=-1)  # (c,)
            total += (lse - logits.gather(1, tc[:, None]).squeeze(1)).sum()
            grad = logits.sub_(lse[:, None]).exp_()  # softmax, in place of the logits
            grad[torch.arange(len(tc), device=x.device), tc] -= 1.0  # d loss / d logits (c, V)
            grad = grad.to(dtype)  # back to the matmuls' dtype, as autograd would cast it
            grad_x[i : i + chunk] = grad @ weight.to(grad.dtype)  # (c, D)
            grad_w += (grad.T @ xc.to(grad.dtype)).float()  # (V, D), summed in float32
        ctx.save_for_backward(grad_x, grad_w)
        ctx.weight_dtype = weight.dtype
        return total

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None, None]:
        grad_x, grad_w = ctx.saved_tensors
        return grad_x * g.to(grad_x.dtype), (grad_w * g).to(ctx.weight_dtype), None, None
