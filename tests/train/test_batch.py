"""Host-made batches: the same numbers as the device would compute, and a training step that
reads nothing back from the device between logged steps."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from curll.config import load_params
from curll.model.attention import cu_seqlens
from curll.model.config import preset
from curll.model.llama import CausalLM
from curll.train.batch import Batch
from curll.train.data import IGNORE, Doc, Packed, pack
from curll.train.trainer import Settings, train

VOCAB = 300


def packed(n_docs: int = 40, context: int = 48, seed: int = 0) -> Packed:
    rng = np.random.default_rng(seed)
    docs = []
    for _ in range(n_docs):
        k = int(rng.integers(6, 40))
        docs.append(Doc(rng.integers(5, VOCAB, k).tolist(), [i >= 0.6 * k for i in range(k)]))
    return pack(docs, context, pad_id=0)


def test_host_batch_holds_what_the_device_would_compute():
    data = packed()
    arrays = data.batch(range(6))
    b = Batch.of(arrays)
    labels = torch.from_numpy(arrays["labels"])
    trained = labels != IGNORE
    doc_ids = torch.from_numpy(arrays["doc_ids"])
    assert torch.equal(torch.from_numpy(b.cu_seqlens), cu_seqlens(doc_ids)[0])
    assert b.cu_seqlens.dtype == np.int32 and b.cu_seqlens[-1] == doc_ids.numel()
    assert torch.equal(torch.from_numpy(b.targets), labels[trained])
    assert b.trained == int(trained.sum()) and b.tokens == int((doc_ids >= 0).sum())
    assert b.tokens < doc_ids.numel()  # the fixture has padding: a count of all positions would fail


def test_logits_at_flat_indices_equal_logits_under_the_bool_mask():
    data = packed()
    arrays = data.batch(range(4))
    t = Batch.of(arrays).to("cpu")
    torch.manual_seed(0)
    model = CausalLM(preset("tiny", vocab_size=VOCAB)).eval()
    mask = torch.from_numpy(arrays["labels"]) != IGNORE
    with torch.no_grad():
        flat = model(t["input_ids"], t["position_ids"], t["doc_ids"], t["select"], cu_seqlens=t["cu_seqlens"])
        masked = model(t["input_ids"], t["position_ids"], t["doc_ids"], mask)
    assert torch.equal(flat, masked)


class ReadBacks(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Records the ops that make the host wait for the device: a tensor's value read back
    (``_local_scalar_dense``: ``.item()``, ``float()``, ``int()``) and ops whose output shape
    depends on the data (``nonzero``, indexing by a bool mask, ``masked_select``)."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.scalars: list[torch.Tensor] = []
        self.data_dependent: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = func.overloadpacket.__name__
        if name == "_local_scalar_dense":
            self.scalars.append(args[0])
        elif name in ("nonzero", "masked_select") or (
            name in ("index", "index_put_", "index_put")
            and any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in args[1])
        ):
            self.data_dependent.append(name)
        return func(*args, **(kwargs or {}))


def test_training_reads_nothing_back_from_the_device_between_logged_steps(tmp_path):
    data = packed(n_docs=60)
    torch.manual_seed(0)
    model = CausalLM(preset("tiny", vocab_size=VOCAB))
    optim = load_params().train.optim
    s = Settings(batch=4, micro_batch=2, epochs=1, seed=0, checkpoint_every=10**6, log_every=3, optim=optim)
    with ReadBacks() as seen:
        out = train(model, data, s, ckpt=tmp_path / "c.pt")
    assert out.steps >= 6 and len(out.log) == -(-out.steps // 3)
    assert seen.data_dependent == []
    # AdamW keeps its step count in a host tensor and reads it (no device involved): not counted
    assert out.optimizer_state is not None
    steps = [st["step"] for st in out.optimizer_state["state"].values()]
    ours = [t for t in seen.scalars if not any(t is st for st in steps)]
    assert len(ours) == len(out.log)  # the loss of each logged step, nothing else
