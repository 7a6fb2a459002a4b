"""The chat layout of a record: its turns, the QA user turn and the cut marker, written and read back.

split writes records with :func:`record_chat`; train reads them (the loss on the assistant
turn) and cuts long passages with :data:`CUT`; evaluate reads a test record back into its
passage and question (:func:`question_of`), rebuilds the very user turn the models were
trained on (:func:`user_turn`) and cuts passages the same way.

Layout (``messages`` JSON, a list of ``{"role", "content"}``): an optional system turn, the
user turn, the assistant turn. A user turn is laid out by its type's spec
(:attr:`curll.instances.InstanceType.user`):

- ``context``: the request for a passage, from its template and topic;
- ``ir``: the instruction;
- ``cqa``: the passage, a blank line, ``Question: `` and the question;
- ``csqa``: the passage, a blank line, and the question (the instruction of a skill task).
"""

from __future__ import annotations

import json

from curll.instances import spec

#: marks the end of a passage cut to fit a context window (training rows, test prompts)
CUT = " ..."


def record_chat(system: str, user: str, assistant: str) -> str:
    """The ``messages`` JSON of one record (no system turn when ``system`` is empty)."""
    turns = [{"role": "system", "content": system}] if system else []
    turns += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    return json.dumps(turns, ensure_ascii=False)


def turns_of(messages: str) -> tuple[str, str, str]:
    """(system, user, assistant) of a record's ``messages`` JSON; system is "" when absent."""
    msgs = {m["role"]: m["content"] for m in json.loads(messages)}
    return msgs.get("system", ""), msgs["user"], msgs["assistant"]


def user_turn(kind: str, question: str, passage: str = "") -> str:
    """The user turn of a record of ``kind`` asking ``question`` (about ``passage`` for a type
    made on one), laid out by the type's spec; ``kind`` is a type whose turn is its question."""
    t = spec(kind)
    return t.user_turn({t.prompt: question}, passage)


def question_of(kind: str, user: str, passage: str) -> str:
    """The question of a user turn laid out by :func:`user_turn` on ``passage`` (the inverse,
    :meth:`curll.instances.InstanceType.question_of`); a user turn that does not start with the
    passage (or an IR turn) is returned whole."""
    return spec(kind).question_of(user, passage)
