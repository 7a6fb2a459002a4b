"""One micro-batch as the trainer feeds it, with everything that depends on the data made on
the host: a training step then never waits for the GPU to read a value back.

What a GPU would otherwise compute and read back (a sync that stalls the CPU until every
queued kernel has run, so the next kernels are launched late): the positions that carry a
loss (boolean indexing is a ``nonzero``), the document runs and their longest length for
the varlen kernel, and the token counts. The packer already knows all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import torch

from curll.model.attention import cu_seqlens_host
from curll.train.data import IGNORE


@dataclass(frozen=True)
class Batch:
    """``input_ids``, ``position_ids``, ``doc_ids`` (B, T) int64 (doc id -1 on padding);
    ``cu_seqlens`` (S + 1,) int32, the runs of ``doc_ids`` (:func:`cu_seqlens_host`);
    ``select`` (N,) int64, the flat indices into B * T of the positions with a loss, and
    ``targets`` (N,) int64 their next tokens, in row-major order."""

    input_ids: np.ndarray
    position_ids: np.ndarray
    doc_ids: np.ndarray
    cu_seqlens: np.ndarray
    select: np.ndarray
    targets: np.ndarray

    @staticmethod
    def of(arrays: dict[str, np.ndarray]) -> Batch:
        """From :meth:`curll.train.data.Packed.batch`'s arrays."""
        labels = arrays["labels"].reshape(-1)
        select = np.flatnonzero(labels != IGNORE)
        return Batch(
            input_ids=arrays["input_ids"], position_ids=arrays["position_ids"],
            doc_ids=arrays["doc_ids"], cu_seqlens=cu_seqlens_host(arrays["doc_ids"]),
            select=select, targets=labels[select],
        )  # fmt: skip

    @property
    def tokens(self) -> int:
        """Positions holding a document token (not padding)."""
        return int(np.count_nonzero(self.doc_ids >= 0))

    @property
    def trained(self) -> int:
        """Positions with a loss."""
        return len(self.select)

    def to(self, device: str | torch.device) -> dict[str, torch.Tensor]:
        """The arrays as tensors on ``device``, by field name. On CUDA they are copied from
        pinned host memory without blocking: a copy from pageable memory would wait for the
        GPU to finish the work already queued."""
        cuda = torch.device(device).type == "cuda"
        out = {}
        for f in fields(self):
            t = torch.from_numpy(getattr(self, f.name))
            out[f.name] = t.pin_memory().to(device, non_blocking=True) if cuda else t.to(device)
        return out


def loss_sum(net: torch.nn.Module, t: dict[str, torch.Tensor], *, chunk: int = 0) -> torch.Tensor:
    """Summed cross-entropy (nats, float32, a 0-dim tensor left on the device) of ``net`` on a
    :meth:`Batch.to` batch: logits only at the positions with a loss, ``chunk`` of them at a
    time when > 0 (:func:`curll.model.loss.output_loss`)."""
    loss: torch.Tensor = net(
        t["input_ids"], t["position_ids"], t["doc_ids"], t["select"],
        cu_seqlens=t["cu_seqlens"], targets=t["targets"], loss_chunk=chunk,
    )  # fmt: skip
    return loss
