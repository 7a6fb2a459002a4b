"""Several processes, one training run: DDP under ``torchrun`` or ``accelerate launch``.

Both launchers start one process per GPU and set ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``MASTER_ADDR`` and ``MASTER_PORT``; :func:`setup` turns those into a process group (NCCL on
CUDA, gloo on CPU, so the same code runs as two CPU processes in tests). Without them it is a
no-op and training runs in one process.

:func:`relaunch` is how the ``train`` stage honours ``train.processes`` > 1 when DVC starts
it as a plain command: it runs the same ``curll`` command again under
``python -m torch.distributed.run --standalone`` and waits for it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class World:
    rank: int
    size: int
    local_rank: int

    @property
    def main(self) -> bool:
        """Rank 0: the one process that writes outputs."""
        return self.rank == 0


def launched() -> bool:
    """True inside a process started by torchrun / accelerate with more than one process."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def current() -> World:
    """This process's place in the initialised group (rank 0 of 1 when there is none)."""
    if dist.is_available() and dist.is_initialized():
        return World(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0")))
    return World(0, 1, 0)


@contextmanager
def setup(device: str) -> Iterator[World]:
    """Join the process group the launcher described (if any) for the ``device`` type.

    On CUDA each process uses GPU ``LOCAL_RANK``. The group is destroyed on exit, also after
    an error, so a failed rank does not leave the others waiting forever on a collective.
    """
    if not launched() or dist.is_initialized():
        yield current()
        return
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend="nccl" if cuda else "gloo")
    try:
        yield current()
    finally:
        dist.destroy_process_group()


def all_sum(values: Sequence[float]) -> list[float]:
    """Element-wise sum of ``values`` over all ranks (identity with one process)."""
    if current().size == 1:
        return list(values)
    t = torch.tensor(values, dtype=torch.float64)
    if dist.get_backend() == "nccl":
        t = t.cuda()
    dist.all_reduce(t)
    return [float(v) for v in t.cpu()]


def barrier() -> None:
    if current().size > 1:
        dist.barrier()


def relaunch(processes: int, args: Sequence[str]) -> None:
    """Run ``curll ARGS`` as ``processes`` DDP processes on this machine; raise if one fails."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc_per_node={processes}", "-m", "pipeline.tools.cli", *args]  # fmt: skip
    subprocess.run(cmd, check=True)  # torchrun sets OMP_NUM_THREADS=1 per process unless set
