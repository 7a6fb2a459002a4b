"""Text-type templates: 15-20 abstract formats of 2-5 words per indicator and kind.

Contract of :func:`make_templates`: one request per (indicator, kind); the answer must
match :func:`templates_schema`. A set without ``min_items`` valid formats is asked again
(the engine's attempts, :func:`set_check`). Each returned format is checked by :func:`check_items`:
word count and characters; every word in the dictionary (:mod:`curll.lexicon`; unless
``dictionary`` is false, as for random weights); a
placeholder or generic label ("format one", "format 2",
"text type", "example"); a copy of a phrase the prompt quotes as an example, or of the
indicator's own wording; a case-insensitive repeat. A set with fewer than ``min_items``
valid formats is rejected whole, and a rejected item is never replaced by anything else.
Returns (accepted, rejects), both :class:`~curll.schemas.TemplateSchema` tables, plus
stats with the yield per kind and stage (see :mod:`curll.yields`); rejects carry their
reason.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection
from dataclasses import replace
from typing import Any

import pandas as pd

from curll.artifacts import count_by, records
from curll.config import Params
from curll.config.generation import TemplatesParams
from curll.config.llm import MaxChars
from curll.lexicon import is_word
from curll.llm.engine import Check, Engine
from curll.llm.tasks import Answer, Task, TaskDef, ask, llm_use, provenance
from curll.llm.types import ChatRequest
from curll.yields import measure

_WORD = r"[A-Za-z']{1,15}"  # letters only: with hyphens a small model chains words into one
_NUMBER = (
    r"(\d+|[a-z]|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|first|second|third|fourth|fifth|last)"
)
_GENERIC = (
    r"(formats?|text ?types?|types?|templates?|items?|examples?|options?|categories|category|kinds?"
    r"|styles?|genres?|things?|something|writing|texts?|passages?|instructions?|responses?|names?)"
)
#: a label with no content: generic words, optionally numbered ("format one", "a text type", "item 3")
PLACEHOLDER = re.compile(
    rf"^((a|an|the|my|your) )?({_GENERIC} ?)+( {_NUMBER})?$|\b{_GENERIC} {_NUMBER}$", re.I
)
_QUOTED = re.compile(r'"([^"{}\[\]]{3,60})"')


def templates_schema(p: TemplatesParams) -> dict[str, Any]:
    """``{"text_types": [format, ...]}`` with the item count and the words per format."""
    pattern = f"^{_WORD}( {_WORD}){{{p.min_words - 1},{p.max_words - 1}}}$"
    return {
        "type": "object",
        "properties": {
            "text_types": {
                "type": "array",
                "items": {"type": "string", "pattern": pattern, "maxLength": 16 * p.max_words - 1},
                "minItems": p.min_items,
                "maxItems": p.max_items,
            }
        },
        "required": ["text_types"],
        "additionalProperties": False,
    }


def check_items(
    items: list[str], p: TemplatesParams, avoid: Collection[str] = (), *, dictionary: bool = True
) -> list[tuple[str, str]]:
    """(normalised format, reject reason or "") per item; the filter behind the stage.

    ``avoid``: phrases an item must not copy, whole or (from three words on) in part: the
    prompt's quoted examples, the indicator's own fields."""
    pattern = re.compile(templates_schema(p)["properties"]["text_types"]["items"]["pattern"])
    banned = {" ".join(a.lower().split()) for a in avoid}
    seen: dict[str, int] = {}
    out = []
    for i, raw in enumerate(items):
        text = " ".join(str(raw).split())
        key = text.lower()
        if not pattern.match(text):
            reason = f"not {p.min_words}-{p.max_words} plain words"
        elif dictionary and (unknown := [w for w in text.split() if not is_word(w)]):
            reason = f"not_words: {unknown[0]!r} is not an English word"
        elif PLACEHOLDER.search(text):
            reason = f"placeholder: {text!r} is a generic label, not a format"
        elif key in banned or (len(key.split()) >= 3 and any(key in b for b in banned)):
            reason = f"echo: {text!r} copies the prompt"
        elif key in seen:
            reason = f"duplicate of item {seen[key]}"
        else:
            seen[key] = i
            reason = ""
        out.append((text, reason))
    valid = sum(1 for _, r in out if not r)
    if valid < p.min_items:
        short = f"set has {valid} valid formats, fewer than min_items={p.min_items}"
        out = [(t, r or short) for t, r in out]
    return out


def prompt_phrases(request: ChatRequest) -> set[str]:
    """What an item must not copy: the phrases the prompt quotes, and (from three words on) any
    stretch of the prompt itself, the indicator's wording included."""
    quoted = {q for m in request.messages for q in _QUOTED.findall(m.content)}
    return {*quoted, *(m.content for m in request.messages)}


def set_check(p: TemplatesParams, *, dictionary: bool = True) -> Check:
    """The engine-side check of a set: enough valid formats, else the reason (so the engine
    asks again with the next attempt's seed before the set is rejected)."""

    def check(request: ChatRequest, parsed: Any) -> str | None:
        checked = check_items(list(parsed["text_types"]), p, prompt_phrases(request), dictionary=dictionary)
        bad = [r for _, r in checked if r]
        return bad[0] if len(bad) == len(checked) else None

    return check


def _schema(params: Params, caps: MaxChars) -> dict[str, Any]:
    return templates_schema(params.templates)  # bounded by the params' word counts, not the caps


#: the templates task, answered by ``llm.use``'s profile
TASK = TaskDef("templates", lambda params: params.templates.prompt, _schema, llm_use)


def make_templates(
    indicators: pd.DataFrame, engine: Engine, task: Task, p: TemplatesParams, *, dictionary: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    jobs = [(row, kind) for row in records(indicators) for kind in p.kinds]
    fields = [
        {**row, "kind": kind, "min_items": p.min_items, "max_items": p.max_items,
         "min_words": p.min_words, "max_words": p.max_words}
        for row, kind in jobs
    ]  # fmt: skip
    rows: list[dict[str, Any]] = []
    task = replace(task, check=set_check(p, dictionary=dictionary), attempts=p.attempts)
    for (ind, kind), answer in zip(jobs, ask(engine, task, fields), strict=True):
        rows.extend(_rows(ind, kind, answer, p, dictionary))
    df = pd.DataFrame(rows, columns=list(_COLUMNS))
    accepted = df[df["status"] == "ok"].reset_index(drop=True)
    rejects = df[df["status"] == "reject"].reset_index(drop=True)
    sets = df.groupby("request_key", sort=False).agg(
        stage=("stage", "first"), type=("kind", "first"),
        kept=("status", lambda st: bool((st == "ok").any())), reason=("reason", "first"),
    )  # fmt: skip
    expected = {(int(r["stage"]), kind) for r, kind in jobs}
    stats = {
        "requests": len(jobs),
        "accepted": count_by(accepted, ["stage", "kind"]),
        "rejected_items": len(rejects),
        "reject_reasons": dict(Counter(_reason_kind(r) for r in rejects["reason"])),
        "yields": measure(sets, expected),
    }
    return accepted, rejects, stats


_COLUMNS = (
    "request_key", "model", "backend", "sampling", "prompt_version", "prompt_hash", "raw",
    "status", "reason", "attempts", "indicator_id", "stage", "kind", "item", "template",
)  # fmt: skip


def _rows(
    ind: dict[str, Any], kind: str, answer: Answer, p: TemplatesParams, dictionary: bool
) -> list[dict[str, Any]]:
    base = {"indicator_id": ind["indicator_id"], "stage": ind["stage"], "kind": kind}
    if not answer.ok:
        return [{**provenance(answer), **base, "item": -1, "template": ""}]
    parsed = list(answer.result.parsed["text_types"])
    checked = check_items(parsed, p, prompt_phrases(answer.request), dictionary=dictionary)
    return [
        {**provenance(answer, status="reject" if r else "ok", reason=r), **base, "item": i, "template": t}
        for i, (t, r) in enumerate(checked)
    ]


def _reason_kind(reason: str) -> str:
    """Group reasons for the metrics: drop the specifics after a colon or a number."""
    return re.split(r"[:\d]", reason, maxsplit=1)[0].strip()
