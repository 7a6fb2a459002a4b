"""DDP: two CPU processes (gloo) under torchrun train the same model as one process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from harness.commands import run
from tests.train import ddp_worker

ROOT = Path(__file__).resolve().parents[2]


def test_two_processes_match_one(tmp_path):
    out = tmp_path / "ddp.pt"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           "-m", "tests.train.ddp_worker", str(out)]  # fmt: skip
    run(cmd, cwd=ROOT)
    ddp = torch.load(out, weights_only=True)
    assert ddp["world"] == 2
    model, single = ddp_worker.run(tmp_path / "single.ckpt")
    assert [r["step"] for r in ddp["log"]] == [1, 2, 3]
    # the same steps: loss and trained tokens summed over ranks equal the one-process values
    assert [r["loss"] for r in ddp["log"]] == pytest.approx([r["loss"] for r in single.log], abs=1e-4)
    for name, a in model.state_dict().items():
        torch.testing.assert_close(ddp["model"][name], a, rtol=1e-4, atol=1e-5, msg=name)
    assert not torch.equal(ddp["model"]["model.norm.weight"], torch.ones(64))  # it did train
