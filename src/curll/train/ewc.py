"""Elastic weight consolidation (Kirkpatrick et al. 2017), as Avalanche's ``EWCPlugin`` computes it
in its ``separate`` mode (tests/train/test_ewc.py runs that plugin's own code beside this one).

After a stage's run, :func:`importances` estimates the diagonal Fisher of its train rows: the
mean, over the rows in consecutive batches of ``train.batch`` rows, of each parameter's squared
gradient of the batch loss (the mean cross-entropy over the batch's trained tokens; summed over
micro-batches, so ``micro_batch`` changes the memory, not the Fisher),

    F_i = (1 / B) * sum over batches b of (d loss_b / d w_i)^2,

and :class:`Memory` keeps it with that stage's weights w*. While a later stage trains,
:meth:`Memory.penalty` adds to the loss

    lambda * sum over kept stages s of sum_i F_s,i * (w_i - w*_s,i)^2

(no factor 1/2, as Avalanche). Memory: two copies of the parameters per finished stage (host
memory; moved to the training device once per run).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from curll.model.llama import CausalLM
from curll.train.batch import Batch, loss_sum
from curll.train.trainer import Penalty, Rows

#: parameter name -> tensor
Params = dict[str, torch.Tensor]


def importances(
    model: CausalLM, data: Rows, *, batch: int, device: str, micro_batch: int = 0, loss_chunk: int = 0
) -> Params:
    """The diagonal Fisher of ``model`` on the rows of ``data`` (see the module docstring), in
    row order, ``batch`` rows a batch (the train batch), each batch's gradient summed over
    forward passes of ``micro_batch`` rows (0: the whole batch at once; memory, not the result,
    depends on it); a batch without a trained token adds nothing but counts. The model's
    gradients are left cleared, its mode as it was."""
    was_training = model.training
    model.to(device).eval()
    total = {k: torch.zeros_like(p) for k, p in model.named_parameters()}
    batches = 0
    step = micro_batch or batch
    for start in range(0, data.rows, batch):
        stop = min(start + batch, data.rows)
        model.zero_grad(set_to_none=True)
        n = data.loss_tokens(list(range(start, stop)))
        if n:
            for first in range(start, stop, step):  # d(batch loss) = sum of d(part's loss sum) / n
                part = list(range(first, min(first + step, stop)))
                loss = loss_sum(model, Batch.of(data.batch(part)).to(device), chunk=loss_chunk) / n
                loss.backward()  # type: ignore[no-untyped-call]
            for k, p in model.named_parameters():
                if p.grad is not None:
                    total[k] += p.grad.detach().pow(2)
        batches += 1
    model.zero_grad(set_to_none=True)
    model.train(was_training)
    return {k: (v / max(batches, 1)).cpu() for k, v in total.items()}


@dataclass
class Memory:
    """What EWC keeps of the finished stages of one sequence: (Fisher, weights) per stage."""

    strength: float
    stages: list[tuple[Params, Params]] = field(default_factory=list)

    def add(self, fisher: Params, model: CausalLM) -> Memory:
        """A new memory with ``model``'s weights and their ``fisher`` added (this one unchanged)."""
        weights = {k: p.detach().to("cpu", copy=True) for k, p in model.named_parameters()}
        return Memory(self.strength, [*self.stages, (fisher, weights)])

    def penalty(self, device: str) -> Penalty | None:
        """The penalty of the stages kept, as a function of the model being trained; None when
        there is nothing to keep (the first stage, or strength 0)."""
        if not self.stages or not self.strength:
            return None
        kept = [({k: f.to(device) for k, f in fisher.items()}, {k: w.to(device) for k, w in weights.items()})
                for fisher, weights in self.stages]  # fmt: skip
        strength = self.strength

        def penalty(model: torch.nn.Module) -> torch.Tensor:
            total = torch.zeros((), device=device)
            for fisher, weights in kept:
                for k, p in model.named_parameters():
                    if k in fisher:
                        total = total + (fisher[k] * (p - weights[k]).pow(2)).sum()
            return strength * total

        return penalty
