"""One rank of the DDP test: ``python -m torch.distributed.run ... -m tests.train.ddp_worker OUT``.

Trains the tiny preset on synthetic packed rows in the process group torchrun describes
(gloo on CPU) and, on rank 0, saves the final weights and the log to ``OUT`` for the test
to compare with a one-process run of :func:`run`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

from curll.config import load_params
from curll.model.config import preset
from curll.model.llama import CausalLM
from curll.train import distributed
from curll.train.data import Doc, Packed, pack
from curll.train.trainer import Outcome, Settings, train

VOCAB = 64


def data() -> Packed:
    """9 rows of 16 tokens: with batch 4 and micro_batch 1 the last step has one row only."""
    rng = np.random.default_rng(0)
    docs = []
    for _ in range(15):
        n = int(rng.integers(4, 14))
        docs.append(Doc(rng.integers(1, VOCAB, n).tolist(), (rng.random(n) < 0.7).tolist()))
    packed = pack(docs, 16, pad_id=0)
    assert packed.rows == 9, packed.rows
    return packed


def run(ckpt: Path) -> tuple[CausalLM, Outcome]:
    # the optimizer is pinned here, not read from params.yaml: Adam's first steps move each
    # weight by about lr whatever the gradient's size, so float-summation differences between
    # one and two processes grow with lr; 0.005 keeps them inside the test's tolerance
    optim = load_params().train.optim.model_copy(update={"lr": 0.005, "weight_decay": 0.01})
    s = Settings(batch=4, micro_batch=1, epochs=1, seed=3, checkpoint_every=100, log_every=1, optim=optim)
    torch.manual_seed(0)
    model = CausalLM(preset("tiny", vocab_size=VOCAB))
    return model, train(model, data(), s, ckpt=ckpt)


def main(out: Path) -> None:
    with distributed.setup("cpu") as world:
        model, outcome = run(out.with_suffix(".ckpt"))
        if world.main:
            torch.save({"model": model.state_dict(), "log": outcome.log, "world": world.size}, out)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
