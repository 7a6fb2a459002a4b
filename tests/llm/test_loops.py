"""The loop detector both stopping backends use: long back-to-back repeats only, of any unit."""

from __future__ import annotations

from curll.llm.loops import find_loop


def test_find_loop_catches_long_repeats_only():
    assert find_loop(list(range(100))) == 0
    phrase = [5, 6, 7, 8, 9, 10, 11, 12]  # 8 tokens: 6 repeats are needed to span 48 tokens
    assert find_loop([1, 2, 3, *phrase * 6]) == 8
    assert find_loop([1, 2, 3, *phrase * 5]) == 0
    assert find_loop([4] * 47) == 0 and find_loop([4] * 48) == 1
    sentence = list(range(20, 40))  # a 20-token sentence three times over
    assert find_loop(sentence * 3) == 20


def test_find_loop_works_on_streamed_text_pieces():
    pieces = ["They", "'re", " so", " cute", " and", " adorable", "."] * 8
    assert find_loop(["{", '"text"', ":", ' "', *pieces]) == 7
    assert find_loop([" a", " b", " c"] * 15) == 0  # 45 pieces: shorter than the 48 a loop must span
