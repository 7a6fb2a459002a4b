"""The four generation tasks: their JSON schemas and the semantic check of an answer.

Schemas bound every string with ``maxLength`` (from the LLM profile's ``max_chars``), so a
model that never stops still ends inside its token budget; QA lists have an exact length.
:func:`check` is the filter applied after schema validation: (keep, reason).
"""

from __future__ import annotations

from typing import Any

from curll.config.llm import MaxChars

#: the list key and the (question, answer) keys of each QA task's JSON answer
QA_KEYS = {
    "cqa": ("question_answer_pairs", "question", "answer"),
    "csqa": ("skill_based_pairs", "instruction", "response"),
}


def _obj(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def _str(max_chars: int) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": max_chars}


def task_schema(task: str, caps: MaxChars, *, n_pairs: int = 0) -> dict[str, Any]:
    if task == "context":
        return _obj({"expanded_topic": _str(caps.short), "generated_text": _str(caps.long)})
    if task == "ir":
        return _obj({"instruction": _str(caps.short), "response": _str(caps.long)})
    list_key, q, a = QA_KEYS[task]
    pair = _obj({q: _str(caps.short), a: _str(caps.short)})
    return _obj({list_key: {"type": "array", "items": pair, "minItems": n_pairs, "maxItems": n_pairs}})


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
