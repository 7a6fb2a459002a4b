"""How a model's training text was laid out: the chat layouts a model can be asked and scored in.

A :class:`Layout` is declared once in :data:`LAYOUTS` (the params name one per checkpoint,
``evaluate.checkpoints.models[].layout``); :mod:`curll.evaluate.layouts` builds prompts and
scored documents from it.

- ``curll``: curll's own (:mod:`curll.chat`): an optional system turn, the user turn of the
  item's type (a passage, a blank line and the question for a type made on a passage), in
  ChatML (:data:`CHAT_TEMPLATE`, whatever template a model's folder holds: a hub tokenizer's
  could add a default system turn training never saw); the loss is on the assistant content and
  its closing ``<|im_end|>``.
- ``curll-hub``: the CurLL authors' training text (their ``format_train.py``, as the release
  notes give it): ``<|system|>\\n{passage}\\n<|user|>\\n{question}\\n<|assistant|>\\n{answer}\\n``
  and the tokenizer's end-of-text token. The passage is the system turn and curll's system
  prompt is left out; a type asked on no passage (IR) has no system line (an assumption: the
  authors' script was not read for it). The markers are plain text; the loss is on the tokens of the
  text tokenized whole that hold a character of the answer, its newline or the end-of-text token.

It imports nothing of curll but the registry, so the params can check a layout's name.
"""

from __future__ import annotations

from dataclasses import dataclass

from curll.registry import Registry

#: curll's layout (ChatML) as a chat template: the text :func:`curll.train.data.encode` trains on
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

#: the authors' layout as a chat template (the Jinja a Hugging Face tokenizer renders)
HUB_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


@dataclass(frozen=True)
class Layout:
    name: str
    template: str  # the chat template prompts are rendered with, replacing the tokenizer's own
    passage_in_system: bool  # the passage is the system turn, the question alone the user turn
    about: str  # one line for the docs


#: every layout a model can be asked and scored in
LAYOUTS: Registry[Layout] = Registry("layout", (
    Layout("curll", CHAT_TEMPLATE, passage_in_system=False, about="curll's chat records in ChatML"),
    Layout("curll-hub", HUB_TEMPLATE, passage_in_system=True,
           about="the CurLL authors' <|system|>/<|user|>/<|assistant|> text, passage as system"),
))  # fmt: skip


def layout_of(name: str) -> Layout:
    return LAYOUTS.spec(name)
