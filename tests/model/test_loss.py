"""The output layer's loss in chunks: the same loss and gradients as all at once, without
keeping the (N, V) logits for the backward pass."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F  # noqa: N812

from curll.config import load_params
from curll.model.config import preset
from curll.model.llama import CausalLM
from curll.model.loss import output_loss
from curll.train.data import Doc, pack
from curll.train.trainer import Settings, eval_loss, train

N, D, V = 37, 16, 211  # 37 positions: chunks of 8 leave a short last one


def inputs(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(N, D, generator=g, dtype=torch.float32).requires_grad_()
    w = torch.randn(V, D, generator=g, dtype=torch.float32).requires_grad_()
    return x, w, torch.randint(0, V, (N,), generator=g)


@pytest.mark.parametrize("chunk", [1, 8, 36])
def test_chunked_loss_and_gradients_equal_the_whole_computation(chunk):
    x, w, t = inputs()
    whole = F.cross_entropy(F.linear(x, w), t, reduction="sum")
    # an upstream gradient other than 1 (the trainer scales the loss)
    (whole * 3.0).backward()  # type: ignore[no-untyped-call]
    assert x.grad is not None and w.grad is not None
    want = (whole.detach(), x.grad.clone(), w.grad.clone())
    x.grad = w.grad = None
    got = output_loss(x, w, t, chunk)
    (got * 3.0).backward()  # type: ignore[no-untyped-call]
    # float32 sums in another order: equal to float32's precision
    torch.testing.assert_close(got, want[0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(x.grad, want[1], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(w.grad, want[2], rtol=1e-4, atol=1e-5)


def test_chunks_keep_no_logits_for_the_backward_pass():
    def saved_sizes(chunk: int) -> list[int]:
        x, w, t = inputs()
        sizes: list[int] = []

        def pack_hook(tensor: torch.Tensor) -> torch.Tensor:
            sizes.append(tensor.numel())
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack_hook, lambda t: t):
            output_loss(x, w, t, chunk).backward()  # type: ignore[no-untyped-call]
        return sizes

    assert max(saved_sizes(0)) == N * V  # all at once: the logits wait for the backward
    assert max(saved_sizes(8)) == V * D  # in chunks: the weight's gradient is the largest


def test_without_gradients_the_chunks_sum_to_the_whole_loss():
    x, w, t = inputs()
    with torch.no_grad():
        torch.testing.assert_close(output_loss(x, w, t, 8), output_loss(x, w, t, 0), rtol=1e-6, atol=1e-5)


def test_training_with_chunks_ends_where_training_without_does(tmp_path: Path):
    rng = np.random.default_rng(0)
    docs = [Doc(rng.integers(5, 300, k).tolist(), [i >= 0.5 * k for i in range(k)]) for k in range(8, 40)]
    data = pack(docs, 48, pad_id=0)
    optim = load_params().train.optim
    models = []
    for chunk in (0, 16):
        torch.manual_seed(0)
        model = CausalLM(preset("tiny", vocab_size=300))
        s = Settings(batch=4, micro_batch=2, epochs=1, seed=0, checkpoint_every=100, log_every=1,
                     optim=optim, loss_chunk=chunk)  # fmt: skip
        out = train(model, data, s, ckpt=tmp_path / f"{chunk}.pt")
        assert out.steps >= 4
        models.append((model, [r["loss"] for r in out.log]))
    (a, loss_a), (b, loss_b) = models
    assert loss_a == pytest.approx(loss_b, rel=1e-4)
    for (name, pa), pb in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        # atol 1e-3: Adam turns a near-zero gradient whose float sum differs by CPU kind into a
        # whole step (lr * sign); the losses above hold the chunked loss to 1e-4
        torch.testing.assert_close(pa, pb, rtol=1e-3, atol=1e-3, msg=name)
    assert eval_loss(a, data, device="cpu", micro_batch=4, loss_chunk=16) == pytest.approx(
        eval_loss(a, data, device="cpu", micro_batch=4), rel=1e-4
    )


def test_under_bf16_autocast_the_chunks_match_the_whole_within_bf16_precision():
    out = {}
    for chunk in (0, 8):
        x, w, t = inputs()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = output_loss(x, w, t, chunk)
        loss.backward()  # type: ignore[no-untyped-call]
        assert loss.dtype == torch.float32 and x.grad is not None and w.grad is not None
        assert x.grad.dtype == w.grad.dtype == torch.float32  # the master weights' dtype
        out[chunk] = (loss.detach(), x.grad, w.grad)
    for a, b in zip(out[8], out[0], strict=True):
        assert ((a - b).norm() / b.norm()).item() < 1e-2
