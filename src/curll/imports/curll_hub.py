"""Layout ``curll-hub``: the CurLL authors' dataset release, one Hub repository per stage and kind.

A repository downloaded with the Hub's client (``hf download Pavankalyan/<name>
--repo-type dataset --local-dir DIR``) is a folder holding ``data/<split>-NNNNN-of-NNNNN.parquet``
and a ``README.md`` card. Its name, ``stage<N>_<kind>``, gives the stage and the kind; a folder
under another name is read as the kind the user names, with the stage from its ``stage`` column.

Each kind below is one :class:`Kind`: the curll record type it becomes, the columns it must hold
and how one row becomes (passage, question, answer) triples, one record each:

- ``cqa`` (train): ``context``, ``question``, ``answer``; no indicator columns.
- ``csqa`` (train): ``csqa``, a list of {answer, question} structs, one record per pair; the
  passage is the ``output`` column (assumed from the card: the file's own text was not seen).
- ``instruct`` (train, val, test): ``instruction`` and ``response``, no passage.
- ``cqa_eval``, ``csqa_eval`` (val, test): ``context``, ``question`` and ``response`` (the
  reference answer); ``prompt`` (their own layout of the question) is not used.
- ``instruct_eval`` (val, test): ``question`` and ``response``.

Records are laid out as curll lays out its own (:mod:`curll.chat`), so models trained by curll
see imported and generated data alike. ``stage{N}_train`` (laid-out text, no question or answer
boundaries a record needs) and ``stage{N}_c_all`` (no card) are refused by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: the indicator metadata columns; a kind without them imports with empty metadata
META = ("indicator", "skill", "subskill", "goal")
#: the release's split names -> curll's
SPLIT_NAMES = {"train": "train", "val": "validation", "validation": "validation", "test": "test"}
FOLDER = re.compile(r"^stage(?P<stage>\d+)_(?P<kind>cqa|csqa|instruct)(?P<eval>_eval)?$")
REFUSED = re.compile(r"^stage\d+_(?P<kind>train|c_all)$")
#: a data file as the Hub writes it; older ``datasets`` releases add a 16-hex fingerprint
DATA_FILE = re.compile(r"^(?P<split>[a-z]+)-(?P<index>\d{5})-of-(?P<total>\d{5})(?:-[0-9a-f]{16})?\.parquet$")

Triple = tuple[str, str, str]  # (passage, question, answer); passage "" for IR


def text(value: Any) -> str:
    """A cell as text; a null cell is empty."""
    return "" if value is None else str(value)


def _one(passage: str | None, question: str, answer: str) -> Callable[[Mapping[str, Any]], list[Triple]]:
    def triples(row: Mapping[str, Any]) -> list[Triple]:
        return [(text(row[passage]) if passage else "", text(row[question]), text(row[answer]))]

    return triples


def _csqa_pairs(row: Mapping[str, Any]) -> list[Triple]:
    passage = text(row["output"])
    pairs = row["csqa"] or []
    return [(passage, text((pair or {}).get("question")), text((pair or {}).get("answer"))) for pair in pairs]


@dataclass(frozen=True)
class Kind:
    """One kind of repository: what its rows become and what they must hold."""

    name: str  #: the folder suffix: cqa, csqa_eval, ...
    type: str  #: the curll record type: ir, cqa or csqa
    columns: tuple[str, ...]  #: required besides ``stage``
    triples: Callable[[Mapping[str, Any]], list[Triple]]
    #: the column whose value ties a passage's questions into one unit (one split)
    unit: str


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("cqa", "cqa", ("context", "question", "answer"), _one("context", "question", "answer"),
             "context"),
        Kind("csqa", "csqa", ("id", "output", "csqa", *META), _csqa_pairs, "id"),
        Kind("instruct", "ir", ("id", "instruction", "response", *META),
             _one(None, "instruction", "response"), "id"),
        Kind("cqa_eval", "cqa", ("id", "context", "question", "response", *META),
             _one("context", "question", "response"), "id"),
        Kind("csqa_eval", "csqa", ("id", "context", "question", "response", *META),
             _one("context", "question", "response"), "id"),
        Kind("instruct_eval", "ir", ("id", "question", "response", *META), _one(None, "question", "response"),
             "id"),
    )
}  # fmt: skip


def from_folder(name: str) -> tuple[int, str] | None:
    """(stage, kind) from a repository folder's name, or None when it is not such a name;
    ``stage<N>_train`` and ``stage<N>_c_all`` raise ValueError saying why they are not read."""
    refused = REFUSED.match(name)
    if refused:
        why = {
            "train": "holds laid-out training text, not questions and answers",
            "c_all": "has no dataset card to read its columns from",
        }[refused["kind"]]
        raise ValueError(f"a stage<N>_{refused['kind']} repository {why}: import the typed ones "
                         "(stage<N>_cqa, _csqa, _instruct and their _eval)")  # fmt: skip
    m = FOLDER.match(name)
    if m is None:
        return None
    return int(m["stage"]), m["kind"] + (m["eval"] or "")
