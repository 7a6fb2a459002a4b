"""The generation task of every instance type (:mod:`curll.instances`): its JSON schema, its
answer read as instances, and the semantic check of an answer.

A type's answer is an object of its spec's ``answer`` keys, or, for a type asked for a list
(``pairs``), an object holding a list of such objects of an exact length. Schemas bound every
string with ``maxLength`` (from the LLM profile's ``max_chars``: ``long`` keys the long cap,
the others the short one), so a model that never stops still ends inside its token budget. A
passage's text (the key of its spec's ``words`` column) may also have a ``minLength``
(``min_text_chars``), so a small model that would stop after one sentence keeps writing.

:func:`check` is the filter applied after schema validation: (keep, reason).
:func:`engine_check` is the same test plus :func:`echo` and verify's content checks that a new
attempt can fix (:func:`form`: loops, short prompts, other languages; verify's own functions,
:func:`curll.verify.content.text_check`), run inside the engine so
a failed answer is asked again (next attempt, new seed) before it becomes a reject, instead of
being kept here and dropped by verify (with the questions made on its passage).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from curll.config import Params
from curll.config.llm import MaxChars
from curll.config.verify import ContentChecks
from curll.instances import TYPES, InstanceType, bases, spec
from curll.llm.engine import Check
from curll.llm.tasks import TaskDef, llm_use, prompt_hash
from curll.llm.types import ChatRequest
from curll.text import words
from curll.verify.content import text_check
from curll.verify.verdict import Drop


def _obj(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def _str(max_chars: int) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": max_chars}


def task_schema(task: str, caps: MaxChars, *, n_pairs: int = 0, min_text_chars: int = 1) -> dict[str, Any]:
    """The JSON schema of ``task``'s answer (see the module docstring)."""
    t = spec(task)
    props = {key: _str(caps.long if key in t.long else caps.short) for key in t.answer}
    if t.words:
        key = t.key_of(t.words)
        props[key] = {**props[key], "minLength": max(1, min(min_text_chars, props[key]["maxLength"]))}
    if not t.pairs:
        return _obj(props)
    return _obj({t.pairs: {"type": "array", "items": _obj(props), "minItems": n_pairs, "maxItems": n_pairs}})


def items(task: str, parsed: Mapping[str, Any]) -> list[dict[str, str]]:
    """The instances an answer of ``task`` makes: its columns' texts, one dict per item of a
    list answer, else one."""
    t = spec(task)
    found = parsed[t.pairs] if t.pairs else [parsed]
    keys = list(zip(t.columns, t.answer, strict=True))
    return [{column: str(item[key]) for column, key in keys} for item in found]


def _definition(t: InstanceType) -> TaskDef:
    def schema(params: Params, caps: MaxChars) -> dict[str, Any]:
        # a passage of fewer than the profile's minimum words would be dropped by verify: ask
        # for at least that many characters (6 a word, spaces included) in the grammar itself
        min_chars = 6 * params.verify.context_words.for_profile(params.llm.use).min
        n_pairs = params.generate.pairs.get(t.name, 0)
        return task_schema(t.name, caps, n_pairs=n_pairs, min_text_chars=min_chars)

    return TaskDef(t.name, lambda params: params.generate.prompts[t.name], schema, llm_use)


def tasks() -> dict[str, TaskDef]:
    """The generation task of every instance type, answered by ``llm.use``'s profile."""
    return {name: _definition(t) for name, t in TYPES.items()}


ECHO_WORDS = 8  # a run this long copied from the prompt's instructions is an echo, not an answer


def _runs(text: str, n: int) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}


def echo(task: str, request: ChatRequest, parsed: dict[str, Any], quotable: str = "") -> str | None:
    """The reason a text field copies ``ECHO_WORDS`` consecutive words of the prompt's own
    wording, or None. Runs found in ``quotable`` (the row's fields: indicator, word, template,
    the passage of a QA task) are not counted: restating the indicator in an exercise, or
    quoting the passage in an answer, is what a good answer does."""
    prompt = _runs(" ".join(m.content for m in request.messages), ECHO_WORDS) - _runs(quotable, ECHO_WORDS)
    for text in (v for item in items(task, parsed) for v in item.values()):
        copied = _runs(text, ECHO_WORDS) & prompt
        if copied:
            return f"echo: copies its prompt ({' '.join(sorted(copied)[0])!r}...)"
    return None


#: the row fields an answer may quote (see :func:`echo`), besides the passage it is asked on
QUOTABLE = ("skill", "subskill", "goal", "indicator", "template", "word")


def form(task: str, parsed: dict[str, Any], checks: ContentChecks | None) -> str | None:
    """The reason an answer fails a content check of verify's that asking again can fix, or None:
    ``degenerate`` (a field that loops, a reply that repeats its prompt), ``short_prompt``,
    ``not_english``. Decided by verify's own :func:`~curll.verify.content.text_check`, with
    verify's thresholds (``checks``; None: no check), on each instance's texts named as verify's
    tables name them. A list answer fails only when none of its items passes (verify drops the
    bad pairs of a usable set), with its first item's reason. A passage's English share is
    measured on its spec's ``generate_english`` columns (its text, not its topic), as it
    always was at generation, so that a retry is decided as before."""
    if checks is None:
        return None
    english_of = spec(task).generate_english
    first: Drop | None = None
    for unit in items(task, parsed):
        gone = text_check(task, unit, checks, english_of=english_of)
        if gone is None:
            return None
        first = first or gone
    return None if first is None else str(first)


def engine_check(
    task: str, quotable: Mapping[str, str] | None = None, checks: ContentChecks | None = None
) -> Check:
    """:func:`check`, :func:`echo` and :func:`form` as an engine check: a failure is retried, then
    rejected. ``quotable``: prompt hash -> the text that request may quote (:func:`quotable_text`);
    ``checks``: verify's content thresholds for the profile (None: :func:`form` is skipped)."""

    def run(request: ChatRequest, parsed: Any) -> str | None:
        keep, why = check(task, parsed)
        if not keep:
            return why
        copied = echo(task, request, parsed, (quotable or {}).get(prompt_hash(request), ""))
        return copied or form(task, parsed, checks)

    return run


def quotable_text(row: Mapping[str, Any]) -> str:
    """The :data:`QUOTABLE` fields of ``row``, then its passage (a field named after the type it
    is an instance of, :attr:`curll.instances.InstanceType.on`), one a line."""
    return "\n".join(str(row[k]) for k in (*QUOTABLE, *bases()) if k in row)


def check(task: str, parsed: dict[str, Any]) -> tuple[bool, str]:
    """(True, "") when every text field has visible content; else (False, reason)."""
    t = spec(task)
    if t.pairs:
        for i, pair in enumerate(parsed[t.pairs], start=1):
            for key in t.answer:
                if not str(pair[key]).strip():
                    return False, f"empty {key} in pair {i}"
        return True, ""
    for key, value in parsed.items():
        if not str(value).strip():
            return False, f"empty {key}"
    return True, ""
