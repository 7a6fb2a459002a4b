"""The continuous-batching decoder: finished rows free their slot, late rows get the same answers,
a shared prompt prefix runs once, and a JSON answer caught in a loop stops early."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from curll.llm.constrained import RowSpec
from curll.llm.decode import MIN_PREFIX, Decoder, DecodeRequest
from curll.llm.transformers_backend import TransformersBackend
from curll.llm.types import ChatRequest
from curll.sampling import Sampling


class FixedLM(torch.nn.Module):
    """A stand-in causal LM: the same logits at every position (``favourite`` first, the stop
    token never), one cache layer of dummy keys. It checks that the decoder keeps the 2-D
    attention mask as wide as the cache, and records (rows, new tokens) per forward pass."""

    def __init__(self, vocab: int, favourite: int, stop: int) -> None:
        super().__init__()
        self.vocab, self.favourite, self.stop = vocab, favourite, stop
        self.calls: list[tuple[int, int]] = []

    def forward(self, input_ids, attention_mask, position_ids, past_key_values, use_cache, logits_to_keep=0):
        b, n = input_ids.shape
        self.calls.append((b, n))
        past_key_values.update(torch.zeros(b, 1, n, 2), torch.zeros(b, 1, n, 2), 0)
        assert attention_mask.shape == (b, past_key_values.get_seq_length())
        assert position_ids.shape == (b, n)
        logits = torch.linspace(0, 1, self.vocab).repeat(b, n, 1)
        logits[..., self.favourite] = 5.0
        logits[..., self.stop] = float("-inf")
        return SimpleNamespace(logits=logits)


def test_a_finished_row_frees_its_slot_for_the_next_request():
    lm = FixedLM(50, favourite=7, stop=0)
    dec = Decoder(lm, vocab_size=50, stop_ids=[0], device="cpu", max_batch=2)
    spec = RowSpec(None, 0, 0.0, 1.0)
    lengths = [40, 5, 5, 5, 5, 5]
    out = dec.run([DecodeRequest((1, 2, 3 + i), n, spec) for i, n in enumerate(lengths)])
    assert [len(d.tokens) for d in out] == lengths and {d.finish_reason for d in out} == {"length"}
    # the long row decodes 39 steps after its prefill; the 4 late rows join in 4 prefills.
    # A static batch of 2 would take 40 + 5 + 5 = 50 passes.
    assert dec.forward_passes == 1 + 39 + 4
    assert max(b for b, _ in lm.calls) == 2


def test_a_shared_prompt_prefix_is_run_once():
    lm = FixedLM(50, favourite=7, stop=0)
    dec = Decoder(lm, vocab_size=50, stop_ids=[0], device="cpu", max_batch=4)
    prefix = tuple(range(10, 10 + MIN_PREFIX + 4))
    reqs = [DecodeRequest((*prefix, 40 + i, 41), 3, RowSpec(None, 0, 0.0, 1.0)) for i in range(4)]
    dec.run(reqs)
    assert lm.calls[0] == (1, len(prefix))  # the prefix, once
    assert lm.calls[1] == (4, 2)  # then only each prompt's own two tokens


@pytest.fixture(scope="module")
def backend(embedded_model: Path) -> TransformersBackend:
    return TransformersBackend(str(embedded_model), name="embedded", device="cpu", max_batch=2)


def test_rows_admitted_mid_run_get_the_answers_they_get_alone(backend):
    reqs = [
        ChatRequest.build(
            [("system", "You write things."), ("user", f"item {i}" * (1 + i % 3))],
            sampling=Sampling(temperature=0.7, max_tokens=8 + 9 * (i % 4), seed=3),
        )
        for i in range(7)
    ]
    together = [c.text for c in backend.complete(reqs)]  # 2 slots: 5 requests join mid-run
    alone = [backend.complete([r])[0].text for r in reqs]
    assert together == alone


def test_a_json_answer_caught_in_a_loop_stops_early_with_a_reason(embedded_model):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(embedded_model)
    backend = TransformersBackend(str(embedded_model), device="cpu")
    a = int(tok.convert_tokens_to_ids("a"))  # type: ignore[arg-type]
    backend.decoder = Decoder(
        FixedLM(backend.vocab_size, favourite=a, stop=tok.eos_token_id),
        vocab_size=backend.vocab_size, stop_ids=backend.stop_ids, device="cpu", max_batch=4,
    )  # fmt: skip
    schema = {"type": "object", "properties": {"text": {"type": "string", "maxLength": 900}},
              "required": ["text"], "additionalProperties": False}  # fmt: skip
    # greedy: a sampled row would draw another token now and then (its seed comes from the
    # model's path, a temp folder), and each such draw restarts the loop's count
    greedy = Sampling(temperature=0.0, max_tokens=400)
    [looped] = backend.complete([ChatRequest.build([("user", "x")], schema=schema, sampling=greedy)])
    assert looped.finish_reason == "loop" and looped.error is None  # an answer (stored), not a failed call
    assert looped.completion_tokens < 70  # caught within a few checks, not at max_tokens 400
    assert looped.text.startswith('{"text": "aaaa')
    backend.stop_loops = False
    [ran_on] = backend.complete([ChatRequest.build([("user", "x")], schema=schema, sampling=greedy)])
    assert ran_on.finish_reason == "length" and ran_on.completion_tokens == 400
