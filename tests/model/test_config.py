"""The model's shape: the presets and the training FLOPs count."""

from __future__ import annotations

import pytest
import torch

from curll.model.config import preset
from curll.model.llama import CausalLM


def test_smollm2_135m_preset_has_the_paper_parameter_count():
    with torch.device("meta"):
        model = CausalLM(preset("smollm2-135m"))
    assert model.num_parameters() == 134_515_008
    assert model.lm_head.weight is model.model.embed_tokens.weight


def test_training_flops_count_the_output_layer_at_trained_positions_only():
    cfg = preset("smollm2-135m")
    out_layer = 49_152 * 576  # 28,311,552 weights: 21% of the 134.5M
    per_position = 6 * (134_515_008 - out_layer) + 12 * 30 * 576 * 1024
    assert cfg.train_flops(134_515_008, 1024, tokens=1000, trained=0) == per_position * 1000
    assert (
        cfg.train_flops(134_515_008, 1024, tokens=1000, trained=400)
        == per_position * 1000 + 6 * out_layer * 400
    )
    assert out_layer / 134_515_008 == pytest.approx(0.21, abs=0.005)
