"""The model: the init, documents in a packed row, positions selected for the output layer."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from curll.model.config import preset
from curll.model.llama import CausalLM


def test_init_is_kaiming_normal_with_unit_norms():
    torch.manual_seed(0)
    model = CausalLM(preset("smollm2-8m", vocab_size=4096))
    layer: Any = model.model.layers[0]
    w = layer.mlp.up_proj.weight  # (ffn, D): fan-in D
    assert w.std().item() == pytest.approx((2 / 192) ** 0.5, rel=0.05)
    assert torch.equal(model.model.norm.weight, torch.ones(192))


def test_normal_init_is_small_and_scales_the_residual_outputs_by_depth():
    torch.manual_seed(0)
    model = CausalLM(preset("smollm2-8m", vocab_size=4096), init="normal")
    layer: Any = model.model.layers[0]
    assert layer.mlp.up_proj.weight.std().item() == pytest.approx(0.02, rel=0.05)
    assert model.model.embed_tokens.weight.std().item() == pytest.approx(0.02, rel=0.05)
    for w in (layer.mlp.down_proj.weight, layer.self_attn.o_proj.weight):  # 6 layers: / sqrt(12)
        assert w.std().item() == pytest.approx(0.02 / 12**0.5, rel=0.05)
    assert model.lm_head.weight is model.model.embed_tokens.weight


def test_documents_in_a_packed_row_do_not_see_each_other():
    torch.manual_seed(0)
    model = CausalLM(preset("tiny", vocab_size=100)).eval()
    a, b = torch.randint(0, 100, (1, 5)), torch.randint(0, 100, (1, 4))
    packed = torch.cat([a, b], dim=1)
    pos = torch.tensor([[0, 1, 2, 3, 4, 0, 1, 2, 3]])
    doc = torch.tensor([[0, 0, 0, 0, 0, 1, 1, 1, 1]])
    with torch.no_grad():
        together = model(packed, position_ids=pos, doc_ids=doc)
        alone = model(b)
        first = model(a)
    torch.testing.assert_close(together[:, 5:], alone, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(together[:, :5], first, rtol=1e-5, atol=1e-5)


def test_select_projects_only_the_chosen_positions():
    torch.manual_seed(0)
    model = CausalLM(preset("tiny", vocab_size=100)).eval()
    ids = torch.randint(0, 100, (2, 7))
    select = torch.rand(2, 7) < 0.5
    with torch.no_grad():
        full, some = model(ids), model(ids, select=select)
    assert some.shape == (int(select.sum()), 100)
    torch.testing.assert_close(some, full[select])
