"""Words of a text, and British spellings in American form: one definition for every check.

:func:`words` is how verify's content checks and generate's retry checks split a text:
lower-cased runs of ASCII letters, digits and apostrophes. :func:`words_any_script` is how the
dictionary share (:mod:`curll.lexicon`) does: runs of letters and digits of any script, accents
stripped (``café`` is ``cafe``), so a word in another script is one word, not a gap.
:data:`SPELLINGS` maps a British ending to its American one (organise -> organize, organiser
-> organizer, colour -> color, centre -> center, catalogue -> catalog); the dictionary check
tries each rule on a word it does not know, and verify's stems apply them all.
:func:`canonical` is how text typed in different ways compares as one (NFC, no invisible
characters: zero-width ones, soft hyphens, direction marks): the importers' keys, verify's dedup
and empty check, split's decontamination.
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[a-z0-9']+")
#: a number as a person writes it in a spreadsheet or a YAML file: ASCII digits, an optional point
#: and exponent (``3``, ``.5``, ``3e-3``); not ``1_0.6``, ``inf``, ``0x1F`` or other scripts' digits,
#: which Python's float() would read
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: characters that show nothing: zero-width spaces and joiners, BOMs, the soft hyphen, the
#: Mongolian vowel separator and the bidirectional marks, embeddings and isolates
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")

#: (British ending, American replacement), for :func:`re.Pattern.sub`
SPELLINGS = (
    (re.compile(r"is(e|ed|es|ing|ation|ations|er|ers)$"), r"iz\1"),
    (re.compile(r"our(s?)$"), r"or\1"),
    (re.compile(r"tre(s?)$"), r"ter\1"),
    (re.compile(r"ogue(s?)$"), r"og\1"),
)


def words(text: str) -> list[str]:
    """The lower-cased words of ``text`` (letters, digits and apostrophes), in order."""
    return _WORD.findall(text.lower())


#: a word in any script: letters and digits, apostrophes within
_ANY_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def words_any_script(text: str) -> list[str]:
    """The lower-cased words of ``text`` in any script (letters, digits, apostrophes within), each
    with its accents stripped: ``Café`` is ``cafe``, ``кот`` stays ``кот``."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))
    return _ANY_WORD.findall(bare)


def canonical(text: str) -> str:
    """``text`` with invisible characters dropped (zero-width, soft hyphens, direction marks) and
    accents composed (NFC): "café" typed as one character or as ``e`` and a combining accent is
    one text."""
    return unicodedata.normalize("NFC", _INVISIBLE.sub("", text))
