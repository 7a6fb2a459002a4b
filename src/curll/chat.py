"""The chat layout of a record: its turns, the QA user turn and the cut marker, written and read back.

split writes records with :func:`record_chat`; train reads them (the loss on the assistant
turn) and cuts long passages with :data:`CUT`; evaluate reads a test record back into its
passage and question (:func:`question_of`), rebuilds the very user turn the models were
trained on (:func:`user_turn`) and cuts passages the same way.

Layout (``messages`` JSON, a list of ``{"role", "content"}``): an optional system turn, the
user turn, the assistant turn. User turns by type:

- ``context``: the request for a passage (its wording is split's, :mod:`curll.split.records`);
- ``ir``: the instruction;
- ``cqa``: the passage, a blank line, ``Question: `` and the question;
- ``csqa``: the passage, a blank line, and the question (the instruction of a skill task).
"""

from __future__ import annotations

import json

#: marks the end of a passage cut to fit a context window (training rows, test prompts)
CUT = " ..."
#: the label a comprehension question carries after its passage
CQA_LABEL = "Question: "


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
    """The user turn of a record of ``kind`` asking ``question`` (about ``passage`` for QA)."""
    if kind == "cqa":
        return f"{passage}\n\n{CQA_LABEL}{question}"
    if kind == "csqa":
        return f"{passage}\n\n{question}"
    return question


def question_of(kind: str, user: str, passage: str) -> str:
    """The question of a QA user turn laid out by :func:`user_turn` on ``passage`` (the inverse);
    a user turn that does not start with the passage (or an IR turn) is returned whole."""
    if kind not in ("cqa", "csqa") or not passage or not user.startswith(passage + "\n\n"):
        return user
    question = user[len(passage) + 2 :]
    return question.removeprefix(CQA_LABEL) if kind == "cqa" else question
