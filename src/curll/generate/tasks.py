"""The four generation tasks: their JSON schemas and the semantic check of an answer.

Schemas bound every string with ``maxLength`` (from the LLM profile's ``max_chars``), so a
model that never stops still ends inside its token budget; QA lists have an exact length.
A passage may also have a ``minLength`` (``min_text_chars``), so a small model that would
stop after one sentence keeps writing.

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
from curll.llm.engine import Check
from curll.llm.tasks import TaskDef, llm_use, prompt_hash
from curll.llm.types import ChatRequest
from curll.text import words
from curll.verify.content import FIELDS, text_check
from curll.verify.verdict import Drop

#: the list key and the (question, answer) keys of each QA task's JSON answer
QA_KEYS = {
    "cqa": ("question_answer_pairs", "question", "answer"),
    "csqa": ("skill_based_pairs", "instruction", "response"),
}


def _obj(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def _str(max_chars: int) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": max_chars}


def task_schema(task: str, caps: MaxChars, *, n_pairs: int = 0, min_text_chars: int = 1) -> dict[str, Any]:
    if task == "context":
        text = {**_str(caps.long), "minLength": max(1, min(min_text_chars, caps.long))}
        return _obj({"expanded_topic": _str(caps.short), "generated_text": text})
    if task == "ir":
        return _obj({"instruction": _str(caps.short), "response": _str(caps.long)})
    list_key, q, a = QA_KEYS[task]
    pair = _obj({q: _str(caps.short), a: _str(caps.short)})
    return _obj({list_key: {"type": "array", "items": pair, "minItems": n_pairs, "maxItems": n_pairs}})


def _definition(name: str) -> TaskDef:
    def schema(params: Params, caps: MaxChars) -> dict[str, Any]:
        g = params.generate
        # a passage of fewer than the profile's minimum words would be dropped by verify: ask
        # for at least that many characters (6 a word, spaces included) in the grammar itself
        min_chars = 6 * params.verify.context_words.for_profile(params.llm.use).min
        n_pairs = {"cqa": g.cqa_pairs, "csqa": g.csqa_pairs}.get(name, 0)
        return task_schema(name, caps, n_pairs=n_pairs, min_text_chars=min_chars)

    return TaskDef(name, lambda params: str(getattr(params.generate.prompts, name)), schema, llm_use)


#: the four generation tasks, answered by ``llm.use``'s profile
TASKS = {name: _definition(name) for name in ("context", "ir", "cqa", "csqa")}

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
    if task in QA_KEYS:
        list_key, q, a = QA_KEYS[task]
        texts = [str(p[k]) for p in parsed[list_key] for k in (q, a)]
    else:
        texts = [str(v) for v in parsed.values()]
    for text in texts:
        copied = _runs(text, ECHO_WORDS) & prompt
        if copied:
            return f"echo: copies its prompt ({' '.join(sorted(copied)[0])!r}...)"
    return None


#: the row fields an answer may quote (see :func:`echo`)
QUOTABLE = ("skill", "subskill", "goal", "indicator", "template", "word", "context")


#: the fields whose English share generate measures, where it differs from verify's (all the
#: instance's fields): a passage is measured without its topic, as it always was at
#: generation, so that a retry is decided as before
ENGLISH_OF = {"context": ("text",)}


def form(task: str, parsed: dict[str, Any], checks: ContentChecks | None) -> str | None:
    """The reason an answer fails a content check of verify's that asking again can fix, or None:
    ``degenerate`` (a field that loops, a reply that repeats its prompt), ``short_prompt``,
    ``not_english``. Decided by verify's own :func:`~curll.verify.content.text_check`, with
    verify's thresholds (``checks``; None: no check), on each unit's texts named as verify's
    tables name them. A QA answer fails only when none of its pairs passes (verify drops the
    bad pairs of a usable set), with its first pair's reason."""
    if checks is None:
        return None
    if task in QA_KEYS:
        list_key, q, a = QA_KEYS[task]
        units = [(str(p[q]), str(p[a])) for p in parsed[list_key]]
    elif task == "ir":
        units = [(str(parsed["instruction"]), str(parsed["response"]))]
    else:
        units = [(str(parsed["expanded_topic"]), str(parsed["generated_text"]))]
    names, english_of = FIELDS[task][0], ENGLISH_OF.get(task, ())
    first: Drop | None = None
    for unit in units:
        gone = text_check(task, dict(zip(names, unit, strict=True)), checks, english_of=english_of)
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
    return "\n".join(str(row[k]) for k in QUOTABLE if k in row)


def check(task: str, parsed: dict[str, Any]) -> tuple[bool, str]:
    """(True, "") when every text field has visible content; else (False, reason)."""
    if task in QA_KEYS:
        list_key, q, a = QA_KEYS[task]
        for i, pair in enumerate(parsed[list_key], start=1):
            for key in (q, a):
                if not str(pair[key]).strip():
                    return False, f"empty {key} in pair {i}"
        return True, ""
    for key, value in parsed.items():
        if not str(value).strip():
            return False, f"empty {key}"
    return True, ""
