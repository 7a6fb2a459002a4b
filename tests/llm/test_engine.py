"""Engine and cache: cache hits, targeted re-asks, attempts, rejects, persistence."""

from __future__ import annotations

from collections.abc import Sequence

from curll.llm.cache import RequestCache
from curll.llm.engine import Engine, parse
from curll.llm.types import ChatRequest, Completion
from curll.sampling import Sampling

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


class ScriptedBackend:
    """A unit-test double: answers from a function of the request; counts what it is asked."""

    name = "scripted"
    model = "m"

    def __init__(self, answer=lambda r: '{"n": 1}') -> None:
        self.answer = answer
        self.asked: list[ChatRequest] = []

    def complete(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        self.asked.extend(requests)
        return [Completion(text=self.answer(r), completion_tokens=3) for r in requests]


def req(text: str, **kw) -> ChatRequest:
    return ChatRequest.build([("user", text)], schema=SCHEMA, **kw)


def test_parse_contract():
    assert parse('{"n": 2}', SCHEMA) == ({"n": 2}, None)
    assert parse('{"n": "x"}', SCHEMA)[1] == "schema violation at n: 'x' is not of type 'integer'"
    assert str(parse("{", SCHEMA)[1]).startswith("invalid JSON")
    assert parse("  ", None) == (None, "empty output")
    assert parse("free text", None) == (None, None)


def test_keys_cover_model_prompt_sampling_schema_and_version():
    base = req("a")
    assert base.key("m") == req("a").key("m")
    variants = [
        req("b"),
        req("a", sampling=Sampling(temperature=0.7)),
        req("a", prompt_version="v2"),
        ChatRequest.build([("user", "a")]),
        base.retry(1),
    ]
    assert len({base.key("m"), base.key("other"), *(v.key("m") for v in variants)}) == 7


def test_warm_cache_asks_nothing_and_a_changed_prompt_asks_only_itself(tmp_path):
    requests = [req(f"q{i}") for i in range(10)]
    first = ScriptedBackend()
    cold = Engine(first, RequestCache(tmp_path / "c.db"), progress=False).run(requests)
    assert len(first.asked) == 10 and not any(r.cached for r in cold)

    second = ScriptedBackend()  # a new process: reopen the cache file
    changed = [*requests[:9], req("q9 edited")]
    warm = Engine(second, RequestCache(tmp_path / "c.db"), progress=False).run(changed)
    assert [r.messages[0].content for r in second.asked] == ["q9 edited"]
    assert [r.cached for r in warm] == [True] * 9 + [False]
    assert [r.parsed for r in warm] == [r.parsed for r in cold]


def test_invalid_answers_are_retried_then_rejected_and_nothing_crashes(tmp_path):
    def answer(r: ChatRequest) -> str:
        text = r.messages[0].content
        return {"good": '{"n": 1}', "late": '{"n": 2}' if r.attempt == 2 else "oops", "never": '{"n": "x"}'}[
            text
        ]

    backend = ScriptedBackend(answer)
    engine = Engine(backend, RequestCache(tmp_path / "c.db"), attempts=3, progress=False)
    good, late, never = engine.run([req("good"), req("late"), req("never")])
    assert (good.status, good.attempts) == ("ok", 1)
    assert (late.status, late.attempts, late.parsed) == ("ok", 3, {"n": 2})
    assert (never.status, never.attempts, never.text) == ("reject", 3, '{"n": "x"}')
    assert never.reason is not None and "schema violation" in never.reason
    asked = len(backend.asked)
    # a rerun replays every attempt from the cache: not one new request
    again = Engine(ScriptedBackend(answer), RequestCache(tmp_path / "c.db"), attempts=3, progress=False)
    assert [r.status for r in again.run([req("good"), req("late"), req("never")])] == ["ok", "ok", "reject"]
    assert again.backend_calls == 0 and asked == 1 + 3 + 3
    # the usage line says why: "late" failed twice as invalid JSON, "never" twice by the schema
    # (its last attempt is the reject, not a retry); the cached rerun tells the same
    for run in (engine, again):
        assert run.usage[-1].retried == {"invalid JSON": 2, "schema violation at n": 2}
        assert run.usage[-1].line().endswith("retried: invalid JSON 2, schema violation at n 2")


def test_seeded_retries_move_the_seed_and_errors_are_not_cached(tmp_path):
    cache = RequestCache(tmp_path / "c.db")
    r = req("x", sampling=Sampling(seed=42))
    assert [r.retry(a).sampling.seed for a in range(3)] == [42, 43, 44]
    assert cache.put_many("m", [("k1", Completion("", error="HTTP 500")), ("k2", Completion("{}"))]) == 1
    assert set(cache.get_many(["k1", "k2"])) == {"k2"}


def test_identical_requests_in_one_run_are_asked_once():
    backend = ScriptedBackend()
    results = Engine(backend, None, progress=False).run([req("same")] * 5)
    assert len(backend.asked) == 1 and len(results) == 5


def test_a_rerun_after_transient_errors_keeps_the_accepted_answers(tmp_path):
    """Failed calls are not cached: attempt 0 of a request accepted at attempt 2 left no entry.
    A rerun must not ask attempt 0 again (a healthy server would answer it and change the result)."""

    class Flaky(ScriptedBackend):
        def complete(self, requests):
            self.asked.extend(requests)
            return [
                Completion("", error="APIStatusError: 503") if r.attempt < 2 and r.messages[0].content == "q1"
                else Completion(text=f'{{"n": {10 + r.attempt}}}')
                for r in requests
            ]  # fmt: skip

    requests = [req(f"q{i}") for i in range(3)]
    flaky = Flaky()
    first = Engine(flaky, RequestCache(tmp_path / "c.db"), attempts=3, progress=False).run(requests)
    assert [(r.parsed, r.attempts) for r in first] == [({"n": 10}, 1), ({"n": 12}, 3), ({"n": 10}, 1)]
    healthy = ScriptedBackend(lambda r: '{"n": 99}')
    again = Engine(healthy, RequestCache(tmp_path / "c.db"), attempts=3, progress=False).run(requests)
    assert healthy.asked == []
    same = [(r.parsed, r.attempts, r.status) for r in first]
    assert [(r.parsed, r.attempts, r.status) for r in again] == same


def test_identical_requests_count_once_so_retries_are_never_negative():
    backend = ScriptedBackend(lambda r: '{"n": 1}' if r.attempt else "not JSON")
    engine = Engine(backend, None, attempts=2, progress=False)
    engine.run([req("same"), req("same"), req("other")])
    assert engine.new_requests == 2  # identical requests are asked once
    assert engine.backend_calls - engine.new_requests == 2  # each asked once more


def test_an_answer_stopped_in_a_loop_is_a_stored_reject_and_never_decoded_again(tmp_path):
    """A loop is deterministic (seeded sampling): storing it spares a rerun every decode."""

    class Looping(ScriptedBackend):
        def complete(self, requests):
            self.asked.extend(requests)
            return [
                Completion(text='{"n": 1111111', completion_tokens=40, finish_reason="loop") for _ in requests
            ]

    first = Looping()
    [res] = Engine(first, RequestCache(tmp_path / "c.db"), attempts=2, progress=False).run([req("q")])
    assert res.status == "reject" and res.reason is not None and res.reason.startswith("degenerate: ")
    assert res.text == '{"n": 1111111' and len(first.asked) == 2
    again = Looping()
    [same] = Engine(again, RequestCache(tmp_path / "c.db"), attempts=2, progress=False).run([req("q")])
    assert again.asked == [] and (same.status, same.reason, same.attempts) == ("reject", res.reason, 2)


def test_a_transient_backend_error_keeps_its_attempt_so_a_bad_spell_never_changes_the_answer(tmp_path):
    """A server error the backend retried to its end may pass: the request is left unsettled at
    its attempt (not asked again under the next seed), and the rerun on a healthy server stores
    the very answer a run that never met the spell stores."""

    class Spell(ScriptedBackend):
        def complete(self, requests):
            self.asked.extend(requests)
            return [Completion("", error="APIStatusError: 503", transient=r.messages[0].content == "q1")
                    if r.messages[0].content == "q1" else Completion(text=f'{{"n": {r.sampling.seed}}}')
                    for r in requests]  # fmt: skip

    requests = [req(f"q{i}", sampling=Sampling(seed=42)) for i in range(2)]
    spell = Spell()
    engine = Engine(spell, RequestCache(tmp_path / "c.db"), attempts=3, progress=False)
    first = engine.run(requests)
    assert [r.sampling.seed for r in spell.asked if r.messages[0].content == "q1"] == [42]  # one attempt
    assert (first[1].status, first[1].transient, first[1].attempts) == ("reject", True, 1)
    assert engine.unsettled == ["APIStatusError: 503"]
    healthy = ScriptedBackend(lambda r: f'{{"n": {r.sampling.seed}}}')
    again = Engine(healthy, RequestCache(tmp_path / "c.db"), attempts=3, progress=False).run(requests)
    assert [r.parsed for r in again] == [{"n": 42}, {"n": 42}]  # attempt 0's seed, as with no spell
    assert [r.messages[0].content for r in healthy.asked] == ["q1"]


def test_an_answer_cut_off_at_max_tokens_says_so_in_its_reason():
    class Cut(ScriptedBackend):
        def complete(self, requests):
            self.asked.extend(requests)
            ends = ["length" if r.sampling.seed else "stop" for r in requests]  # the seeded one is cut
            return [Completion(text='{"n": 12', completion_tokens=8, finish_reason=end) for end in ends]

    asked = [req("q", sampling=Sampling(max_tokens=8, seed=1)), req("r", sampling=Sampling(max_tokens=8))]
    cut, closed = Engine(Cut(), None, attempts=1, progress=False).run(asked)
    assert cut.reason is not None and cut.reason.startswith("invalid JSON: ")
    assert cut.reason.endswith(" (cut off at max_tokens = 8)")
    assert closed.reason is not None and "max_tokens" not in closed.reason  # it stopped on its own
