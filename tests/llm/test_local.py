"""The embedded model is our Llama: the model the train stage trains, at the params' tiny shape."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from curll.config.models import RandomModel
from curll.llm.local import INIT, model_config
from curll.model.hf import load_hf
from curll.model.llama import from_seed


def test_the_folder_is_our_model_at_the_shape_params_name(embedded_spec: RandomModel, embedded_model: Path):
    from transformers import AutoTokenizer

    ours = load_hf(embedded_model)
    vocab = len(AutoTokenizer.from_pretrained(embedded_model))
    assert 300 < vocab <= embedded_spec.vocab_size  # the BPE's own size, at most the target
    assert ours.config == replace(model_config(embedded_spec), vocab_size=vocab)
    drawn = from_seed(ours.config, INIT, embedded_spec.seed)  # the weights are from_seed's
    for (name, saved), fresh in zip(ours.state_dict().items(), drawn.state_dict().values(), strict=True):
        assert torch.equal(saved, fresh), name


def test_transformers_and_our_module_give_the_same_logits(embedded_model: Path):
    from transformers import AutoModelForCausalLM

    hf: Any = AutoModelForCausalLM.from_pretrained(embedded_model)
    ours = load_hf(embedded_model).eval()
    ids = torch.randint(0, ours.config.vocab_size, (2, 9), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        torch.testing.assert_close(hf.eval()(ids).logits, ours(ids), rtol=1e-4, atol=1e-4)
