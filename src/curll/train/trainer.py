"""One training run: packed rows -> a trained model, with checkpoints and exact resume.

Contract of :func:`train`: the rows of ``order`` one after another (default:
:func:`epoch_order`, ``epochs`` passes over the rows in an order drawn from ``seed``); each
optimizer step consumes the next ``batch`` rows (the last step what is left) in
``batch / micro_batch`` forward passes and averages the loss over all trained tokens of the step
(so accumulation equals one big batch). AdamW (decay on matrices only), gradient clipping, and
the learning rate of :func:`lr_at`, over the run's own steps or, with ``lr_span``, at the run's
place in a longer schedule (a continual stage with ``optim.rewarm: false``); an optional
``penalty`` of the parameters is added to every step's loss (EWC).
Nothing is read back from the device between logged steps (a GPU keeps its queue full): the
batches are made on the host (:class:`~curll.train.batch.Batch`) and the loss stays on the
device until a step is logged.

Every ``checkpoint_every`` steps (and at the end) model, optimizer, step, token count and
loss log are saved to ``ckpt`` atomically (a full disk or an unwritable folder is a CurllError
naming ``ckpt``, which keeps its last good checkpoint); a run started again with the same ``ckpt``
resumes after the last saved step and ends with the same weights as an uninterrupted run
(on CPU, bit for bit: the data order is fixed by the seed and nothing else is random).

In an initialised process group (:mod:`curll.train.distributed`) each rank takes every
``world``-th micro-batch of a step, DistributedDataParallel sums the gradients (the loss is
scaled so the result equals the one-process step), logged loss and token counts are summed
over ranks, and only rank 0 saves. A rank left without a micro-batch in a short last step
runs one with zero weight, so every rank joins the gradient all-reduce.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from tqdm.auto import tqdm

from curll.artifacts import atomic_path
from curll.config.train import OptimParams
from curll.model.llama import CausalLM
from curll.train import distributed
from curll.train.batch import Batch, loss_sum
from curll.train.data import Packed


class Rows(Protocol):
    """What :func:`train` reads of its data (:class:`~curll.train.data.Packed` or
    :class:`~curll.train.data.Parts`): the row count, the loss tokens of rows, and a batch of rows."""

    @property
    def rows(self) -> int: ...

    def loss_tokens(self, rows: Sequence[int] | np.ndarray) -> int: ...

    def batch(self, rows: Sequence[int] | np.ndarray) -> dict[str, np.ndarray]: ...


#: a term added to a step's loss, of the model's parameters alone (EWC's, :mod:`curll.train.ewc`)
Penalty = Callable[[torch.nn.Module], torch.Tensor]


def epoch_order(rows: int, epochs: int, seed: int) -> np.ndarray:
    """The default order of :func:`train`: ``epochs`` permutations of ``rows`` rows, one after
    another, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.permutation(rows) for _ in range(epochs)])


@dataclass(frozen=True)
class Settings:
    batch: int
    micro_batch: int
    epochs: int
    seed: int
    checkpoint_every: int
    log_every: int
    optim: OptimParams
    device: str = "cpu"
    dtype: torch.dtype = torch.float32
    compile: bool = False  # torch.compile the decoder layers (GPU: fewer, fused kernels)
    loss_chunk: int = 0  # > 0: output layer and loss this many positions at a time (curll.model.loss)


@dataclass
class Outcome:
    steps: int
    tokens: int
    seconds: float
    log: list[dict[str, Any]] = field(default_factory=list)
    trained: int = 0  # positions with a loss (the output layer runs there only)
    optimizer_state: dict[str, Any] | None = None

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0


def lr_at(step: int, total: int, p: OptimParams) -> float:
    """Learning rate for optimizer step ``step`` (0-based) of ``total``."""
    warm = int(p.warmup * total)
    if step < warm:
        return p.lr * (step + 1) / warm
    if p.schedule == "constant":
        return p.lr
    floor = p.lr * p.min_lr_ratio
    if p.schedule == "cosine":
        progress = (step - warm) / max(1, total - warm)
        return floor + (p.lr - floor) * 0.5 * (1 + math.cos(math.pi * progress))
    decay_from = total - int(p.decay * total)  # wsd
    if step < decay_from:
        return p.lr
    return floor + (p.lr - floor) * (total - step) / max(1, total - decay_from)


def make_optimizer(model: torch.nn.Module, p: OptimParams, *, fused: bool = False) -> torch.optim.AdamW:
    """AdamW, weight decay on matrices only; ``fused``: one CUDA kernel for all parameters."""
    matrices = [w for w in model.parameters() if w.ndim >= 2]
    vectors = [w for w in model.parameters() if w.ndim < 2]
    groups: list[dict[str, Any]] = [
        {"params": matrices, "weight_decay": p.weight_decay},
        {"params": vectors, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=p.lr, betas=(p.beta1, p.beta2), eps=p.eps, fused=fused or None)


def _save(path: Path, model: CausalLM, opt: torch.optim.Optimizer, step: int, out: Outcome) -> None:
    state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step, "tokens": out.tokens,
             "trained": out.trained, "seconds": out.seconds, "log": out.log}  # fmt: skip
    with atomic_path(path) as tmp, tmp.open("wb") as f:
        # a file object, not the path: torch's own writer reports a failed write (a full disk) as
        # a RuntimeError without its errno; through Python the OSError stays, and atomic_path makes
        # a full disk or a read-only folder a CurllError naming ``path`` (the temporary removed)
        try:
            torch.save(state, f)
        except RuntimeError as exc:
            cause = exc.__cause__ or exc.__context__  # the file's OSError, when a write failed
            if isinstance(cause, OSError):
                raise cause from None
            raise


def train(
    model: CausalLM,
    data: Rows,
    s: Settings,
    *,
    ckpt: Path,
    optimizer_state: dict[str, Any] | None = None,
    desc: str = "train",
    on_step: Callable[[int], None] | None = None,
    order: np.ndarray | None = None,
    lr_span: tuple[int, int] | None = None,
    penalty: Penalty | None = None,
) -> Outcome:
    """Train ``model`` on the rows of ``order`` (default :func:`epoch_order` of ``s``); see the
    module docstring. ``lr_span``: (steps of the schedule before this run, the schedule's total
    steps), default (0, this run's steps): step i runs at ``lr_at(before + i, total)``.
    ``penalty``: a term of the parameters added to every step's loss (its gradient added after
    the batch's, on every rank alike; the logged loss is the data's alone)."""
    w = distributed.current()
    rank, world = w.rank, w.size
    model.to(s.device)
    if s.compile:  # each decoder layer in place: names, state_dict and checkpoints unchanged
        for layer in model.model.layers:
            if getattr(layer, "_compiled_call_impl", None) is None:  # not twice (a resumed model)
                layer.compile()
    opt = make_optimizer(model, s.optim, fused=torch.device(s.device).type == "cuda")
    if optimizer_state is not None:
        opt.load_state_dict(optimizer_state)
    start, done_before = 0, Outcome(steps=0, tokens=0, seconds=0.0)
    if ckpt.is_file():
        state = torch.load(ckpt, map_location=s.device, weights_only=True)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        start = int(state["step"])
        # a checkpoint is only ever read by the training code that wrote it (its key hashes
        # that code, curll.train.runs), so every field :func:`_save` writes is there
        done_before = Outcome(
            0, int(state["tokens"]), float(state["seconds"]), state["log"], trained=int(state["trained"])
        )
    device_type = torch.device(s.device).type
    net: torch.nn.Module = model
    if world > 1:
        net = torch.nn.parallel.DistributedDataParallel(model)
    order = epoch_order(data.rows, s.epochs, s.seed) if order is None else np.asarray(order, dtype=np.int64)
    steps = -(-len(order) // s.batch)
    before, total_steps = (0, steps) if lr_span is None else lr_span
    out = Outcome(
        steps, done_before.tokens, done_before.seconds, done_before.log, trained=done_before.trained
    )
    bar = tqdm(range(start, steps), desc=desc, initial=start, total=steps, disable=rank != 0)
    for step in bar:
        t0 = time.perf_counter()
        rows = order[step * s.batch : (step + 1) * s.batch]
        n_loss = max(1, data.loss_tokens(rows))
        micro = [rows[i : i + s.micro_batch] for i in range(0, len(rows), s.micro_batch)][rank::world]
        weight = 1.0 if micro else 0.0
        micro = micro or [rows[:1]]  # a zero-weight pass keeps this rank in the all-reduce
        lr = lr_at(before + step, total_steps, s.optim)
        for group in opt.param_groups:
            group["lr"] = lr
        step_loss = torch.zeros((), dtype=torch.float64, device=s.device)  # read back when logged only
        tokens, n_trained = 0.0, 0.0
        for i, part in enumerate(micro):
            host = Batch.of(data.batch(part))
            batch = host.to(s.device)
            sync = i == len(micro) - 1 or world == 1
            ctx = net.no_sync() if not sync and world > 1 else torch.enable_grad()  # type: ignore[operator]
            amp = torch.autocast(device_type, dtype=s.dtype, enabled=s.dtype != torch.float32)
            with ctx, amp:
                scale = weight * world / n_loss  # DDP averages over ranks: scale back to a sum
                loss = loss_sum(net, batch, chunk=s.loss_chunk) * scale
                loss.backward()  # type: ignore[no-untyped-call]
            step_loss += loss.detach()
            tokens += weight * host.tokens
            n_trained += weight * host.trained
        if penalty is not None:
            penalty(model).backward()  # type: ignore[no-untyped-call]
        if s.optim.clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), s.optim.clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        tokens, n_trained = distributed.all_sum([tokens, n_trained])
        out.tokens += int(tokens)
        out.trained += int(n_trained)
        done = step + 1
        logged = done % s.log_every == 0 or done == steps
        total = distributed.all_sum([float(step_loss) / world])[0] if logged else 0.0
        out.seconds += time.perf_counter() - t0
        if logged:
            out.log.append(
                {"step": done, "loss": round(total, 5), "lr": lr, "tokens_per_s": round(out.tokens_per_s, 1)}
            )
            bar.set_postfix(loss=f"{total:.3f}")
        if rank == 0 and (done % s.checkpoint_every == 0 or done == steps):
            _save(ckpt, model, opt, done, out)
        if on_step is not None:
            on_step(done)
    out.optimizer_state = opt.state_dict()
    return out


def eval_loss(
    model: CausalLM, data: Packed, *, device: str, micro_batch: int, loss_chunk: int = 0
) -> float | None:
    """Mean cross-entropy (nats per trained token) of ``model`` on ``data``, no gradients;
    None when ``data`` has no trained token. The model is left in training mode."""
    n = data.loss_tokens(range(data.rows))
    if n == 0:
        return None
    model.to(device).eval()
    total = torch.zeros((), dtype=torch.float64, device=device)
    with torch.no_grad():
        for start in range(0, data.rows, micro_batch):
            part = range(start, min(start + micro_batch, data.rows))
            total += loss_sum(model, Batch.of(data.batch(part)).to(device), chunk=loss_chunk)
    model.train()
    return round(float(total) / n, 5)
