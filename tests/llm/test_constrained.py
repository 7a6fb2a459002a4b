"""The Gumbel-max sampler draws from softmax(logits / T), restricted to the top-p nucleus."""

from __future__ import annotations

import torch

from curll.llm.constrained import ConstrainedSampler, RowSpec


def draw(logits: torch.Tensor, row: RowSpec, n: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(row.seed)
    picks = [int(ConstrainedSampler._sample_scores(logits, row, gen).argmax()) for _ in range(n)]
    return torch.bincount(torch.tensor(picks), minlength=logits.numel()).float() / n


def test_frequencies_match_the_tempered_softmax():
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0])
    for temperature in (0.5, 1.0):
        freq = draw(logits, RowSpec(None, 0, temperature, 1.0), 20000)
        expected = torch.softmax(logits / temperature, dim=-1)
        assert torch.allclose(freq, expected, atol=0.015), (freq, expected)


def test_top_p_never_picks_outside_the_nucleus():
    logits = torch.log(torch.tensor([0.5, 0.3, 0.15, 0.05]))
    freq = draw(logits, RowSpec(None, 0, 1.0, 0.8), 5000)
    assert freq[2] == 0 and freq[3] == 0  # 0.5 + 0.3 reaches 0.8: the rest is cut
    assert abs(freq[0] - 0.5 / 0.8) < 0.03


def test_temperature_zero_is_argmax():
    logits = torch.tensor([0.1, 3.0, 0.2])
    assert draw(logits, RowSpec(None, 0, 0.0, 1.0), 50)[1] == 1.0
