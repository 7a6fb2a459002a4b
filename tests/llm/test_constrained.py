"""Per-row sampling: Gumbel-max draws from softmax(logits / T) in the top-p nucleus; grammar
bitmasks, stop detection and the repetition penalty."""

from __future__ import annotations

import json

import pytest
import torch

from curll.llm.constrained import RowSpec, RowState, apply_bitmask, sample_rows, stop_bitmask


def gumbel_scores(logits: torch.Tensor, row: RowSpec, gen: torch.Generator) -> torch.Tensor:
    """The reference, one row at a time: scores (V,) whose argmax is a sample from the row's
    tempered, nucleus-filtered distribution (sample_rows must draw the same tokens)."""
    if row.temperature == 0:
        return logits  # greedy
    z = logits / row.temperature
    if row.top_p < 1.0:
        probs = torch.softmax(z, dim=-1)
        sorted_p, order = probs.sort(descending=True)
        # drop a token when the mass before it already reaches top_p (the first always stays)
        drop_sorted = (sorted_p.cumsum(-1) - sorted_p) >= row.top_p
        z = z.masked_fill(torch.zeros_like(drop_sorted).scatter(0, order, drop_sorted), float("-inf"))
    u = torch.rand(z.shape, generator=gen).clamp_(1e-10, 1.0 - 1e-7).to(z.device)
    return z - torch.log(-torch.log(u))


def sample(state: RowState, logits: torch.Tensor) -> int:
    """One token from one row's logits (V,), the way the decode loop draws it."""
    return sample_rows(logits[None], [state])[0]


def draw(logits: torch.Tensor, row: RowSpec, n: int) -> torch.Tensor:
    """Token frequencies of ``n`` draws by sample_rows (one row state, asked n times in a batch)."""
    state = RowState(row, [], logits.numel(), stop_bitmask([], 1), "cpu")
    picks = torch.tensor(sample_rows(logits.expand(n, -1).clone(), [state] * n))
    return torch.bincount(picks, minlength=logits.numel()).float() / n


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


def test_bitmask_masks_exactly_the_forbidden_tokens_of_the_listed_rows():
    vocab = 70  # three 32-bit words, the last one partial
    allowed = {0, 31, 32, 63, 64, 69}
    row_bits = stop_bitmask(sorted(allowed), 3)[None]  # the same bit layout as a grammar mask
    logits = torch.zeros(2, vocab)
    apply_bitmask(logits, row_bits, [1])
    assert torch.isfinite(logits[0]).all()  # row 0 is not constrained
    assert {int(i) for i in torch.isfinite(logits[1]).nonzero()} == allowed


@pytest.fixture(scope="module")
def grammar(embedded_model):
    import xgrammar as xgr
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(embedded_model)
    info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok), stop_token_ids=[tok.eos_token_id])
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}},
              "required": ["a"], "additionalProperties": False}  # fmt: skip
    return tok, xgr.GrammarCompiler(info).compile_json_schema(json.dumps(schema), any_whitespace=False)


def test_a_row_is_done_when_its_json_closes_without_asking_for_the_stop_token(grammar):
    tok, compiled = grammar
    stops = stop_bitmask([tok.eos_token_id], (len(tok) + 31) // 32)
    state = RowState(RowSpec(compiled, 0, 0.0, 1.0), [1, 2], len(tok), stops, "cpu")
    ids = tok('{"a": "ab"}', add_special_tokens=False)["input_ids"]
    finished = [state.accept(t) for t in ids]
    assert finished == [False] * (len(ids) - 1) + [True]
    assert tok.decode(state.tokens) == '{"a": "ab"}'


def test_penalties_lower_tokens_the_answer_used_not_the_prompt():
    stops = stop_bitmask([9], 1)
    logits = torch.tensor([2.0, 1.9, -1.0, -1.0, 1.5, 0.0, 0.0, 0.0, 0.0, 0.0])
    presence = RowState(RowSpec(None, 0, 0.0, 1.0, presence_penalty=1.0), [0, 1], 10, stops, "cpu")
    assert sample(presence, logits) == 0  # the prompt's tokens are not penalised
    presence.accept(0)
    assert sample(presence, logits) == 1  # 0 was used once: 2.0 - 1.0 < 1.9
    presence.accept(1)
    assert sample(presence, logits) == 4  # both used: 1.0 and 0.9 < 1.5
    frequency = RowState(RowSpec(None, 0, 0.0, 1.0, frequency_penalty=0.3), [], 10, stops, "cpu")
    for token in (0, 0):
        frequency.accept(token)
    assert sample(frequency, logits) == 1  # two uses: 2.0 - 0.6 = 1.4 < 1.9
    assert logits[0] == 2.0  # the caller's logits are left alone


def test_batched_sampling_draws_what_each_row_would_alone():
    torch.manual_seed(0)
    logits = torch.randn(4, 50)
    stops = stop_bitmask([49], 2)
    specs = [RowSpec(None, 1, 0.7, 1.0), RowSpec(None, 2, 0.0, 1.0), RowSpec(None, 3, 1.0, 0.5),
             RowSpec(None, 4, 0.3, 0.9, presence_penalty=1.0)]  # fmt: skip
    together = [RowState(s, [], 50, stops, "cpu") for s in specs]
    alone = [RowState(s, [], 50, stops, "cpu") for s in specs]
    for st in (*together, *alone):
        st.accept(7)
    for _ in range(20):
        batch = sample_rows(logits, together)
        singles = [
            int(gumbel_scores(a.penalised(logits[i]), a.spec, a.generator).argmax())
            for i, a in enumerate(alone)
        ]
        assert batch == singles
