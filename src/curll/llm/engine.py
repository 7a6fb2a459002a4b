"""The engine: cache, batching, JSON parsing, schema validation and attempts over a backend.

``Engine(backend, cache, attempts=3).run(requests)`` returns one :class:`Result` per
request, in order:
1. each request (as attempt 0) is looked up in the cache; misses go to the backend in
   batches of ``batch_size``. Each answer is committed to the cache as soon as the
   backend reports it (a backend that takes ``on_answer``, see :mod:`curll.llm.protocol`:
   the openai and llamacpp backends), so a killed run loses only the requests in flight;
   a backend without it has its batch committed as soon as the batch returns (a kill then
   loses at most the batch in flight). The progress bar moves as answers are committed;
2. each answer is parsed: one the backend stopped in a loop (``finish_reason == "loop"``)
   is ``degenerate``; with a schema it must be JSON that validates; without one,
   non-empty text; then, if given, the task's own ``check(request, parsed)`` (a reason,
   or None when the answer is usable);
3. a request whose answer fails (a final backend error, invalid JSON, schema violation,
   failed check) is asked again as the next attempt (a new cache key; a fixed seed moves
   with the attempt), up to ``attempts`` in all; then it becomes a ``reject`` with the last
   reason. A backend error that may pass (:attr:`Completion.transient`: a server error, a
   rate limit, a timeout the backend retried to its end) is not: the request keeps its
   attempt and is left unsettled (see below), so a rerun asks that very attempt again and a
   server's bad spell never changes which answer is stored.
A rerun gives the same results: failed backend calls are not cached, so an attempt that
failed leaves no entry; when a later attempt of a request is stored, the attempts before
it that left nothing are skipped, never asked again (else a server that failed once would
change an answer that was already accepted).
Nothing raises for a bad answer: a parse failure is a recorded reject, never a crash.

:meth:`Engine.close` (or leaving ``with engine:``) closes the backend when it has a
``close`` (the llamacpp backend stops its servers) and the cache; leaving it without an error
then raises a :class:`~curll.errors.CurllError` when some request's last attempt failed in a way
that may pass (:meth:`Engine.check_settled`; not with ``failures="reject"``, which keeps such
requests as rejects).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self, cast

import jsonschema
from tqdm.auto import tqdm

from curll.errors import CurllError
from curll.llm.cache import RequestCache
from curll.llm.protocol import AnswersAsTheyCome, Backend, OnAnswer, takes_on_answer
from curll.llm.types import ChatRequest, Completion, Result
from curll.llm.usage import Usage, append

#: a task's own test of a parsed answer: a reject reason, or None when the answer is usable
Check = Callable[[ChatRequest, Any], str | None]


def parse(text: str, schema: dict[str, Any] | None) -> tuple[Any, str | None]:
    """(parsed, None) when ``text`` satisfies ``schema``; (None, reason) otherwise."""
    if schema is None:
        return (None, None) if text.strip() else (None, "empty output")
    try:
        obj = json.loads(text, strict=False)  # raw control characters in strings are common; accept them
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg} at char {exc.pos}"
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(obj))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        said = error.message if len(error.message) <= 300 else error.message[:300] + "..."  # quotes the value
        return None, f"schema violation at {where}: {said}"
    return obj, None


def _parsed(ans: Completion, req: ChatRequest) -> tuple[Any, str | None]:
    """(parsed, None) for a usable answer; (None, reason) for a failed call, a loop or a parse failure."""
    if ans.error:
        return None, ans.error
    if ans.finish_reason == "loop":
        return None, f"degenerate: the answer fell into a loop; stopped after {ans.completion_tokens} tokens"
    parsed, reason = parse(ans.text, req.schema)
    if reason is not None and ans.finish_reason == "length":  # why the JSON never closed
        reason += f" (cut off at max_tokens = {req.sampling.max_tokens})"
    return parsed, reason


class UnsettledError(CurllError):
    """Raised by :meth:`Engine.check_settled`: requests failed in a way that may pass."""


class Engine:
    def __init__(
        self,
        backend: Backend,
        cache: RequestCache | None = None,
        *,
        attempts: int = 3,
        batch_size: int = 64,
        progress: bool = True,
        desc: str = "llm",
        usage_log: str | Path | None = None,
        failures: Literal["stop", "reject"] = "stop",
    ) -> None:
        if attempts < 1:
            raise ValueError("attempts must be >= 1")
        self.backend = backend
        self.cache = cache
        self.attempts = attempts
        self.batch_size = batch_size
        self.progress = progress
        self.desc = desc
        self.backend_calls = 0  # requests actually sent to the backend (cache misses, retries included)
        self.new_requests = 0  # first attempts sent to the backend (not cached; identical ones once)
        self.usage: list[Usage] = []  # one per run (see curll.llm.usage)
        self.unsettled: list[str] = []  # the reasons of results whose last attempt failed transiently
        self.failures = failures  # "reject": such results are kept as rejects (check_settled passes)
        self.usage_log = None if usage_log is None else Path(usage_log)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
        if kind is None:
            self.check_settled()

    def check_settled(self) -> None:
        """A CurllError when a result's last attempt failed in a way that may pass (a server
        error, a rate limit, a timeout: :attr:`Result.transient`). Such a reject is no answer of
        the model's and nothing of it is stored, so the stage must not end as if it were done:
        run again, it asks only those requests (a pipeline would otherwise keep the rejects for
        good, since nothing it depends on changed). With ``failures="reject"`` they stay rejects."""
        if self.unsettled and self.failures == "stop":
            n, first = len(self.unsettled), " ".join(self.unsettled[0].split())[:160]
            raise UnsettledError(f"{n} request(s) to {self.backend.model} failed in a way that may pass "
                                 f"(first: {first}) and nothing of them is stored: run the stage again (dvc "
                                 "repro) to ask only them; if they fail again, set llm.failures: reject to "
                                 "keep them as rejects", field="llm.failures")  # fmt: skip

    def close(self) -> None:
        """Release what the backend holds (servers, worker processes) and the cache."""
        close = getattr(self.backend, "close", None)
        if callable(close):
            close()
        if self.cache is not None:
            self.cache.close()

    def run(
        self,
        requests: Sequence[ChatRequest],
        check: Check | None = None,
        attempts: int | None = None,
        label: str = "",
    ) -> list[Result]:
        """One result per request (see the module docstring); ``attempts`` overrides the engine's.
        ``label`` names the task in the run's :class:`Usage` (default: the engine's desc)."""
        start = time.perf_counter()
        usage = Usage(label or self.desc, self.desc, self.backend.model, self.backend.name, len(requests))
        self.usage.append(usage)
        tries = attempts or self.attempts
        model = self.backend.model
        results: list[Result | None] = [None] * len(requests)
        pending = list(range(len(requests)))
        # the bar counts first answers as batches return; retries show in its postfix; closed on an
        # error too, so a message after it starts on a line of its own
        bar = tqdm(total=len(requests), desc=self.desc, unit="req", disable=not self.progress)
        try:
            stored = self._stored_attempts(requests, tries)
            for attempt in range(tries):
                # an attempt that left no entry while a later one is stored failed in an earlier run
                skipped = [
                    i for i in pending if attempt not in stored[i] and max(stored[i], default=-1) > attempt
                ]
                now = sorted(set(pending) - set(skipped))
                asked = [requests[i].retry(attempt) for i in now]
                if attempt:
                    bar.set_postfix_str(f"attempt {attempt + 1}: {len(asked)} retried")
                else:
                    bar.update(len(skipped))
                answers, cached, sent = self._answer(asked, bar if attempt == 0 else None)
                if attempt == 0:
                    self.new_requests += sent
                    usage.cached = sum(cached)
                usage.sent += sent
                for ans, hit in zip(answers, cached, strict=True):
                    if not hit:
                        usage.prompt_tokens += ans.prompt_tokens
                        usage.completion_tokens += ans.completion_tokens
                still = skipped
                for i, req, ans, hit in zip(now, asked, answers, cached, strict=True):
                    parsed, reason = _parsed(ans, req)
                    if reason is None and check is not None:
                        reason = check(req, parsed)
                    # a backend error that may pass keeps its attempt (unsettled: a stop, or an
                    # unstored reject): another seed would make the answer hang on the server's health
                    unsettled = ans.error is not None and ans.transient
                    if reason is not None and attempt + 1 < tries and not unsettled:
                        still.append(i)
                        usage.retry(reason)
                        continue
                    results[i] = Result(
                        key=requests[i].key(model),
                        status="ok" if reason is None else "reject",
                        text=ans.text,
                        parsed=parsed,
                        reason=reason,
                        attempts=attempt + 1,
                        model=model,
                        backend=self.backend.name,
                        prompt_tokens=ans.prompt_tokens,
                        completion_tokens=ans.completion_tokens,
                        latency_s=ans.latency_s,
                        cached=hit,
                        transient=unsettled,
                    )
                pending = sorted(still)
                if not pending:
                    break
        finally:
            bar.close()
        done = [r for r in results if r is not None]
        usage.ok = sum(r.status == "ok" for r in done)
        usage.rejected = len(done) - usage.ok
        self.unsettled += [r.reason or "" for r in done if r.transient]
        usage.seconds = time.perf_counter() - start
        if self.progress and requests:
            tqdm.write(usage.line())
        if self.usage_log is not None and requests:
            append(self.usage_log, usage)
        return done

    def _stored_attempts(self, requests: Sequence[ChatRequest], tries: int) -> list[set[int]]:
        """Per request, the attempts (below ``tries``) whose answer the cache holds."""
        stored: list[set[int]] = [set() for _ in requests]
        if self.cache is None or tries < 2:
            return stored  # a single attempt has nothing to skip
        model = self.backend.model
        for attempt in range(tries):
            keys = [r.retry(attempt).key(model) for r in requests]
            found = self.cache.get_many(keys)
            for i, k in enumerate(keys):
                if k in found:
                    stored[i].add(attempt)
        return stored

    def _answer(
        self, asked: Sequence[ChatRequest], bar: Any = None
    ) -> tuple[list[Completion], list[bool], int]:
        """Completions for ``asked`` from the cache, or from the backend (then cached); whether
        each was a cache hit; how many requests the backend sent (not those it never sent)."""
        model = self.backend.model
        keys = [r.key(model) for r in asked]
        hits = self.cache.get_many(keys) if self.cache is not None else {}
        out: dict[str, Completion] = dict(hits)
        misses = [(k, r) for k, r in zip(keys, asked, strict=True) if k not in hits]
        unique = list(dict(misses).items())  # identical requests in one run are asked once
        per_key = Counter(k for k, _ in misses)  # identical requests share one answer
        if bar is not None:
            bar.update(len(asked) - len(misses))
        for start in range(0, len(unique), self.batch_size):
            batch = unique[start : start + self.batch_size]
            on_answer, stored = self._store_as_they_come([k for k, _ in batch], per_key, bar)
            answers = self._complete([r for _, r in batch], on_answer)
            if len(answers) != len(batch):
                raise RuntimeError(
                    f"backend {self.backend.name} returned {len(answers)} answers for {len(batch)}"
                )
            self.backend_calls += sum(a.sent for a in answers)
            rest = [
                (k, a) for j, ((k, _), a) in enumerate(zip(batch, answers, strict=True)) if j not in stored
            ]
            if self.cache is not None and rest:
                self.cache.put_many(model, rest)
            out.update((k, a) for (k, _), a in zip(batch, answers, strict=True))
            if bar is not None:
                bar.update(sum(per_key[k] for k, _ in rest))
        sent = sum(out[k].sent for k, _ in unique)  # a request a lost server never got is not counted
        return [out[k] for k in keys], [k in hits for k in keys], sent

    def _store_as_they_come(
        self, keys: list[str], per_key: Counter[str], bar: Any
    ) -> tuple[OnAnswer, set[int]]:
        """A callback that commits answer ``j`` (of the batch with cache keys ``keys``) and
        moves the bar as it comes; the set of the indices it has committed."""
        stored: set[int] = set()

        def on_answer(j: int, ans: Completion) -> None:
            if j in stored or not 0 <= j < len(keys):
                return  # an answer reported twice is stored once
            stored.add(j)
            if self.cache is not None:
                self.cache.put_many(self.backend.model, [(keys[j], ans)])
            if bar is not None:
                bar.update(per_key[keys[j]])

        return on_answer, stored

    def _complete(self, requests: list[ChatRequest], on_answer: OnAnswer) -> list[Completion]:
        """The backend's answers to ``requests``, reported to ``on_answer`` as they come when
        the backend can (see :mod:`curll.llm.protocol`)."""
        if takes_on_answer(self.backend):
            return cast(AnswersAsTheyCome, self.backend).complete(requests, on_answer=on_answer)
        return self.backend.complete(requests)
