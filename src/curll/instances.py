"""The instance types, each declared once as an :class:`InstanceType` in :data:`TYPES`.

An instance type is what the generator writes and everything after it carries: a passage
(``context``), a standalone instruction/response pair (``ir``), comprehension questions on a
passage (``cqa``) and skill tasks on a passage (``csqa``). Its spec says, as data, all that the
stages need, and every stage iterates over :data:`TYPES`:

- generation (:mod:`curll.generate.tasks`): the answer's JSON keys (``answer``, one per table
  column; in a list under ``pairs`` for a type asked for several items at once), which of
  them the profile's long cap bounds (``long``), and whether it is made from a seed of its
  own (``template_kind``: the templates its seeds draw from) or on a kept instance of
  another type (``on``: the passage, whose text the request is given);
- its table (:func:`curll.schemas.generation.instance_schema`): the text ``columns`` after the
  columns every instance has (a type made on a passage also has ``<on>_id``, ``type`` and
  ``q_index``);
- verification (:mod:`curll.verify`): the columns checked for loops and the (``prompt``,
  ``reply``) pair that must differ, the ``compared`` columns (duplicates, diversity,
  readability), the ``seed_word`` columns, ``grounded`` replies, a request too short to ask
  (``asks``), a passage's length in ``words``;
- the split (:mod:`curll.split`): a seeded type is a unit, and ``unit`` lays out its text for
  the rater (a passage's unit adds one ``block`` per type made on it); a type made on a
  passage moves with it;
- the chat layout of a record (:mod:`curll.chat`): ``user`` formats the user turn from the
  row's columns and ``{passage}``, and ``reply`` is the assistant turn;
- evaluation: ``evaluated`` types are the test types the models answer and the judges rate.

Adding a type is adding one spec (:func:`register` for one made at run time, as a test does),
its prompt file and its params entries; a spec checks its own consistency when it is made (the
two shapes the stages know: a seeded type, and a type asked for a list on an instance of a
seeded type). This module imports nothing of curll but :mod:`curll.registry`, so every layer may
read it.
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from curll.registry import Registry


@dataclass(frozen=True)
class InstanceType:
    name: str  # the word in every table's `type` column, every params map and file name
    title: str  # plural, for people
    columns: tuple[str, ...]  # its text columns, in table order
    answer: tuple[str, ...]  # the generation answer's keys, one per column, in the same order
    long: tuple[str, ...]  # answer keys capped at the profile's long max_chars (the others: short)
    prompt: str  # the column a record's user turn asks
    reply: str  # the column a record's assistant turn holds
    user: str  # the record's user turn: a format of the row's columns (and {passage})
    compared: tuple[str, ...]  # the text compared for duplicates, compressed and graded
    on: str = ""  # made on a kept instance of this type (its passage); it moves with it
    pairs: str = ""  # the answer's list key: one instance per item (their number: generate.pairs)
    template_kind: str = ""  # a seeded type: the template kind its seeds draw from
    unit: str = ""  # a seeded type: its unit's text for the rater and decontamination (a format)
    block: str = ""  # made on a passage: the heading of its block in the passage unit's text
    asks: bool = True  # its prompt is a request: one shorter than min_prompt_words is dropped
    seed_word: tuple[str, ...] = ()  # the columns in which the seed's word must appear
    grounded: bool = False  # the reply's content words must come from its passage
    evaluated: bool = False  # a test type: the trained models answer it, judges rate it
    words: str = ""  # the column whose length in words verify.context_words bounds (a passage)
    generate_english: tuple[str, ...] = ()  # the columns generate measures English on (empty: all)

    def __post_init__(self) -> None:
        for problem in self._problems():
            raise ValueError(f"instance type {self.name!r}: {problem}")

    def _problems(self) -> list[str]:
        """What the stages would not handle: the two shapes they know are a seeded type (its own
        seeds, a unit of its own) and a type asked for a list on an instance of a seeded type."""
        out = []
        if bool(self.template_kind) == bool(self.on):
            out.append("set exactly one of template_kind (seeded) and on (made on a passage)")
        if bool(self.on) != bool(self.pairs) or bool(self.on) != bool(self.block):
            out.append(
                "a type made on a passage needs pairs (its list key) and block (its heading), others neither"
            )
        if self.template_kind and not self.unit:
            out.append("a seeded type needs unit (its unit's text for the rater)")
        if self.grounded and not self.on:
            out.append("grounded needs a passage (on)")
        if len(self.answer) != len(self.columns) or not set(self.long) <= set(self.answer):
            out.append("answer needs one key per column, and long only answer keys")
        named = {self.prompt, self.reply, *self.compared, *self.seed_word, *self.generate_english}
        if not named | ({self.words} - {""}) <= set(self.columns):
            out.append(
                f"prompt, reply, compared, seed_word, words, generate_english must be columns: {self.columns}"
            )
        fields = [f for _, f, _, _ in string.Formatter().parse(self.user) if f is not None]
        rebuilt = set(fields) <= {"passage", self.prompt} and self.user.endswith("{" + self.prompt + "}")
        if (self.on or self.evaluated) and not rebuilt:
            out.append(f"user must end with {{{self.prompt}}} and name no other field but {{passage}}: test "
                       "prompts are rebuilt from the question (and the passage)")  # fmt: skip
        if self.on and not self.user.startswith("{passage}\n\n"):
            out.append("user of a type made on a passage must start with {passage} and a blank line")
        return out

    @property
    def seeded(self) -> bool:
        return bool(self.template_kind)

    @property
    def required(self) -> tuple[str, ...]:
        """The text columns verify drops as ``empty`` when blank: the prompt, the reply and the
        compared ones."""
        return tuple(dict.fromkeys((self.prompt, self.reply, *self.compared)))

    @property
    def link(self) -> str:
        """The column naming the instance it was made on (``context_id``), or ""."""
        return f"{self.on}_id" if self.on else ""

    def key_of(self, column: str) -> str:
        """The answer key that fills ``column``."""
        return self.answer[self.columns.index(column)]

    def user_turn(self, row: Mapping[str, Any], passage: str = "") -> str:
        """The user turn of a record of this type: :attr:`user` with the row's columns."""
        return self.user.format_map({**row, "passage": passage})

    def question_of(self, user: str, passage: str) -> str:
        """The :attr:`prompt` of a user turn laid out by :meth:`user_turn` on ``passage`` (its
        inverse): what follows the passage, a blank line and the label between them (CQA's
        ``Question: ``); the whole turn when it does not start with the passage and a blank
        line, or the type is asked on no passage."""
        if not self.on or not passage or not user.startswith(passage + "\n\n"):
            return user
        return user[len(passage) + 2 :].removeprefix(self.label)

    @property
    def label(self) -> str:
        """The text :attr:`user` puts between the passage's blank line and the prompt."""
        for literal, field, _, _ in string.Formatter().parse(self.user):
            if field == self.prompt:
                return literal.removeprefix("\n\n")
        return ""


#: every instance type, in generation order: a type made on another comes after it
TYPES: Registry[InstanceType] = Registry("instance type", (
    InstanceType(
        "context", "passages", ("expanded_topic", "text"), ("expanded_topic", "generated_text"),
        long=("generated_text",), prompt="expanded_topic", reply="text",
        user="Write a text in the form of {template} about this topic: {expanded_topic}",
        compared=("text",), template_kind="context", unit="{text}", asks=False, seed_word=("text",),
        words="text", generate_english=("text",),
    ),
    InstanceType(
        "ir", "instruction/response pairs", ("instruction", "response"), ("instruction", "response"),
        long=("response",), prompt="instruction", reply="response", user="{instruction}",
        compared=("instruction", "response"), template_kind="instruction",
        unit="Instruction: {instruction}\nResponse: {response}", seed_word=("instruction", "response"),
        evaluated=True,
    ),
    InstanceType(
        "cqa", "comprehension questions on passages", ("question", "answer"), ("question", "answer"),
        long=(), prompt="question", reply="answer", user="{passage}\n\nQuestion: {question}",
        compared=("question", "answer"), on="context", pairs="question_answer_pairs",
        block="Comprehension questions", grounded=True, evaluated=True,
    ),
    InstanceType(
        "csqa", "skill tasks on passages", ("question", "answer"), ("instruction", "response"),
        long=(), prompt="question", reply="answer", user="{passage}\n\n{question}",
        compared=("question", "answer"), on="context", pairs="skill_based_pairs",
        block="Skill tasks", evaluated=True,
    ),
))  # fmt: skip
names, spec = TYPES.names, TYPES.spec


def seeded() -> tuple[str, ...]:
    """The types made from seeds of their own (the units of the split), in :data:`TYPES` order."""
    return tuple(t.name for t in TYPES.values() if t.seeded)


def template_kinds() -> tuple[str, ...]:
    """The template kinds the seeded types draw from (context, instruction), in order."""
    return tuple(dict.fromkeys(t.template_kind for t in TYPES.values() if t.template_kind))


def listed() -> tuple[str, ...]:
    """The types asked for a list of items at once (``generate.pairs`` gives their number)."""
    return tuple(t.name for t in TYPES.values() if t.pairs)


def bases() -> tuple[str, ...]:
    """The types others are made on (their passages: context), in :data:`TYPES` order."""
    return tuple(dict.fromkeys(t.on for t in TYPES.values() if t.on))


def made_on(name: str) -> tuple[str, ...]:
    """The types made on an instance of ``name`` (a passage's question types), in order."""
    return tuple(t.name for t in TYPES.values() if t.on == name)


def evaluated() -> tuple[str, ...]:
    """The test types (answered by the trained models, rated by the judges), in order."""
    return tuple(t.name for t in TYPES.values() if t.evaluated)


@contextmanager
def register(kind: InstanceType) -> Iterator[InstanceType]:
    """``kind`` is known inside the block (after the others), then forgotten; the type it is
    made on must be a registered seeded type. Registered in this process only: stages run in
    other processes (DVC's commands, Ray's workers) know the types of this module alone."""
    if kind.on and not (kind.on in TYPES and TYPES[kind.on].seeded):
        raise ValueError(f"instance type {kind.name!r} is made on {kind.on!r}, not a registered seeded type")
    with TYPES.register(kind):
        yield kind
