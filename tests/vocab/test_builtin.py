from __future__ import annotations

from pathlib import Path

import pytest

from curll.errors import CurllError
from curll.vocab import import_vocab

BUILTIN = Path(__file__).resolve().parents[2] / "src" / "curll" / "resources" / "vocab_builtin.csv"


def test_builtin_list_has_every_stage_and_part_of_speech():
    df = import_vocab("curll-words", BUILTIN, stages=range(5))
    assert df.groupby("stage").size().min() >= 20
    assert set(df["pos"]) == {"Noun", "Verb", "Adjective", "Adverb"}
    assert df["aoa"].isna().all()


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ("dog,Noun,x", "stage"),
        ("dog,Noun,\u00b2", "stage"),
        ("dog,Pronoun,0", "pos"),
        (",Noun,0", "word"),
        ("cat,Noun,0", "word"),
    ],
)
def test_word_list_errors(write, row, field):
    path = write("w.csv", "word,pos,stage\ncat,Noun,0\n" + row + "\n")
    with pytest.raises(CurllError) as err:
        import_vocab("curll-words", path)
    assert (err.value.row, err.value.field) == (3, field)


def test_an_accent_typed_either_way_is_one_word(write):
    path = write("w.csv", "word,pos,stage\ncaf\u00e9,Noun,0\ncafe\u0301,Noun,0\n")
    with pytest.raises(CurllError, match="duplicate of row 2") as err:
        import_vocab("curll-words", path)
    assert err.value.row == 3


def test_a_part_of_speech_in_another_case_is_the_same_tag_in_a_word_list(write):
    df = import_vocab("curll-words", write("w.csv", "word,pos,stage\ncat,noun,0\nrun,VERB,0\n"), stages=[0])
    assert sorted(df["pos"]) == ["Noun", "Verb"]
