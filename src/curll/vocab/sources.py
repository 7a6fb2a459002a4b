"""Vocabulary sources -> candidate words with a stage *band*.

A candidate is one (word, pos) with its age of acquisition (``aoa``, years), the share
of raters who knew it (``perc_known``) and its ``band``: the one stage it first
belongs to. :mod:`curll.vocab.bands` then turns bands into stages and caps them.

Formats:
- ``kuperman``: the Kuperman et al. AoA norms CSV: word = ``Lemma_highest_PoS``, pos =
  ``Dom_PoS_SUBTLEX``, one row kept per (lemma, ``AoA_Kup_lem``), content words only (Noun,
  Verb, Adjective, Adverb). Which row of a repeated (lemma, AoA) is kept, ``dedup``:

  - ``lemma_row`` (default): rows missing lemma, ``AoA_Kup_lem`` or ``Perc_known_lem`` are
    dropped first (``NA``/``#N/A``/empty, and ``NaN``/``null`` in a number cell in any case,
    mean missing; a lemma ``nan`` or ``null`` is a word); then of the repeats the lemma's own
    row (``Word`` == lemma: "and", Conjunction) wins when the file has one, else the first;
    only then are other parts of speech dropped, so an inflection's tag ("ands", Noun;
    "anybodies" before "anybody") never stands in for its lemma's. Lemmas are compared in any
    case: "Brownie" (the row "brownies") and "brownie" are one word, and a word in two cases
    with two ages is refused.
  - ``first_row``: the CurLL authors' procedure, step by step: of the four columns, repeats
    of (lemma, AoA) over *all* rows keep the first in file order (a missing value is a
    value here, as in pandas), then rows with any missing value are dropped (missing as
    ``pandas.read_csv`` reads it: ``NA``, ``#N/A``, ``null``, ``nan``, empty, ...), then
    other parts of speech. Words differ from ``lemma_row``'s where an inflection's row
    comes first, and where a lemma comes in two cases (both are kept, as the authors' code
    keeps them).

  Band: 0 if AoA <= 5, else k with 4+k < AoA <= 5+k (any stage up to MAX_STAGE).
- ``curll-words``: curll's own list (the built-in vocabulary), columns
  ``word,pos,stage``; the stage column is the band and aoa/perc_known are unknown. A word
  given twice (in any case: "Dog" and "dog") is refused.

Failure behaviour: a missing column (or two of one name), an age or share that is not a plain
decimal number (``1_0.6``, ``inf``, ``0x1F`` are refused though Python would read them) or is out
of range, a word kept with two ages of acquisition (``kuperman``), an unknown part of speech
(``curll-words``) or a bad stage raise :class:`CurllError` naming the file, spreadsheet row and
column.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from curll.csvio import CsvTable, read_csv
from curll.errors import CurllError
from curll.schemas import MAX_STAGE, POS_TAGS
from curll.schemas.data import stage_of_age
from curll.text import DECIMAL, canonical

#: a number cell with no number in it, in any case ("NaN", "nan", "NAN", "null"...)
MISSING = frozenset({"", "NA", "N/A", "#N/A", "NAN", "NULL"})

#: a lemma cell with no word in it (``lemma_row``): "nan" (a grandmother) and "null" are words
NO_LEMMA = frozenset({"", "NA", "N/A", "#N/A"})
#: the strings pandas.read_csv reads as missing by default (its ``na_values``): the authors'
#: procedure (``first_row``) loaded the norms with pandas, so "null" (a lemma) is missing there
PANDAS_MISSING = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
})  # fmt: skip
Dedup = Literal["lemma_row", "first_row"]
KUPERMAN_COLUMNS = ("Lemma_highest_PoS", "Dom_PoS_SUBTLEX", "AoA_Kup_lem", "Perc_known_lem")


@dataclass(frozen=True)
class Candidate:
    word: str
    pos: str
    aoa: float | None
    perc_known: float | None
    band: int
    row: int = 0  #: the source file's spreadsheet row (0: not from a file)


def _one_age(candidates: list[Candidate], path: Path, fold: bool = True) -> list[Candidate]:
    """``candidates`` unless a word has two of them with two ages of acquisition (whatever their
    parts of speech: the norms give a lemma one age), or two of one part of speech: then a
    CurllError naming the word and both rows. ``fold``: words are compared in any case ("Dog"
    and "dog" are one word)."""
    seen: dict[str, list[Candidate]] = {}
    for c in candidates:
        earlier = seen.setdefault(c.word.casefold() if fold else c.word, [])
        for first in earlier:
            if first.aoa != c.aoa:
                raise CurllError(f"{c.word!r} has two ages of acquisition, {first.aoa} ({first.pos}) in row "
                                 f"{first.row} and {c.aoa} ({c.pos}) in this row: keep one", file=path,
                                 row=c.row, field=KUPERMAN_COLUMNS[2])  # fmt: skip
            if first.pos == c.pos:
                raise CurllError(f"{c.word!r} ({c.pos}) is listed twice, in row {first.row} and in "
                                 "this row: keep one", file=path, row=c.row,
                                 field=KUPERMAN_COLUMNS[0])  # fmt: skip
        earlier.append(c)
    return candidates


def _require(table: CsvTable, names: tuple[str, ...]) -> dict[str, int]:
    cols = {}
    for name in names:
        idx = table.column(name)
        if idx is None:
            raise CurllError(f"missing column {name!r}", file=table.path, row=1, field=name)
        cols[name] = idx
    return cols


def _number(raw: str, table: CsvTable, row: int, field: str, lo: float, hi: float) -> float | None:
    text = raw.strip()
    if text.upper() in MISSING:
        return None
    if not DECIMAL.fullmatch(text):
        raise CurllError(f"expected a number, got {text!r}", file=table.path, row=row, field=field)
    value = float(text)
    if not (lo <= value <= hi):
        raise CurllError(f"{value} is outside {lo}..{hi}", file=table.path, row=row, field=field)
    return value


#: a content word's tag in any case -> as curll writes it
_TAG = {t.lower(): t for t in POS_TAGS}


def read_kuperman(path: str | Path, dedup: Dedup = "lemma_row") -> list[Candidate]:
    """Candidates from a Kuperman AoA CSV (see module docstring), in file order."""
    if dedup not in ("lemma_row", "first_row"):
        raise CurllError(f"must be lemma_row or first_row, got {dedup!r}", field="dedup")
    table = read_csv(path)
    col = _require(table, KUPERMAN_COLUMNS)
    lemma_c, pos_c, aoa_c, known_c = (col[n] for n in KUPERMAN_COLUMNS)
    word_c = table.column("Word", "\ufeffWord")
    chosen: dict[tuple[str, float], tuple[Candidate, bool]] = {}  # key -> (row kept, is the lemma's own)
    first: dict[tuple[str | None, float | None], Candidate | None] = {}  # first_row: key -> first row
    for row, cells in table.rows:
        # parse both numbers on every row, so a corrupt file fails loudly even where
        # the row would have been filtered out
        aoa = _number(cells[aoa_c], table, row, KUPERMAN_COLUMNS[2], 0.0, 30.0)
        known = _number(cells[known_c], table, row, KUPERMAN_COLUMNS[3], 0.0, 1.0)
        lemma = canonical(cells[lemma_c].strip())  # an accent typed either way is one word
        pos = _TAG.get(cells[pos_c].strip().lower(), cells[pos_c].strip())  # "noun" is a Noun
        if dedup == "first_row":
            raw_lemma = None if cells[lemma_c] in PANDAS_MISSING else canonical(cells[lemma_c])
            if (raw_lemma, aoa) not in first:  # a row with a gap takes its key, then is dropped
                whole = bool(lemma) and raw_lemma is not None and cells[pos_c] not in PANDAS_MISSING
                first[(raw_lemma, aoa)] = (
                    Candidate(lemma, pos, aoa, known, stage_of_age(aoa), row)
                    if whole and aoa is not None and known is not None else None
                )  # fmt: skip
            continue
        if aoa is None or known is None or lemma in NO_LEMMA:
            continue
        own = word_c is not None and canonical(cells[word_c].strip()) == lemma
        key = (lemma.casefold(), aoa)  # "Brownie" (a row "brownies") and "brownie": one lemma
        kept = chosen.get(key)
        if kept is None or (own and not kept[1]):  # duplicates first, over every part of speech
            chosen[key] = (Candidate(lemma, pos, aoa, known, stage_of_age(aoa), row), own)
    if dedup == "first_row":  # the authors' code, case and all
        first_rows = [c for c in first.values() if c is not None and c.pos in POS_TAGS]
        return _one_age(first_rows, table.path, fold=False)
    return _one_age([c for c, _ in chosen.values() if c.pos in POS_TAGS], table.path)  # content words


def read_curll_words(path: str | Path) -> list[Candidate]:
    """Candidates from curll's ``word,pos,stage`` list, in file order."""
    table = read_csv(path)
    col = _require(table, ("word", "pos", "stage"))
    out = []
    seen: dict[tuple[str, str], int] = {}
    for row, cells in table.rows:
        word, pos, stage_raw = (cells[col[n]].strip() for n in ("word", "pos", "stage"))
        word, pos = canonical(word), _TAG.get(pos.lower(), pos)
        if not word:
            raise CurllError("empty word", file=table.path, row=row, field="word")
        if pos not in POS_TAGS:
            raise CurllError(
                f"pos must be one of {list(POS_TAGS)}, got {pos!r}", file=table.path, row=row, field="pos"
            )
        if not (stage_raw.isascii() and stage_raw.isdecimal()) or int(stage_raw) > MAX_STAGE:
            raise CurllError(
                f"stage must be 0..{MAX_STAGE}, got {stage_raw!r}", file=table.path, row=row, field="stage"
            )
        key = (word.casefold(), pos)  # "Dog" and "dog": one word
        if key in seen:
            raise CurllError(
                f"duplicate of row {seen[key]} (in any case)", file=table.path, row=row, field="word"
            )
        seen[key] = row
        out.append(Candidate(word, pos, None, None, int(stage_raw)))
    return out


def read_candidates(fmt: str, path: str | Path, dedup: Dedup = "lemma_row") -> list[Candidate]:
    """Candidates from ``path`` in format ``fmt`` (``dedup`` applies to ``kuperman`` only)."""
    if fmt == "kuperman":
        return read_kuperman(path, dedup)
    if fmt == "curll-words":
        return read_curll_words(path)
    raise CurllError(f"unknown vocabulary format {fmt!r}; choose one of {sorted(FORMATS)}", field="format")


FORMATS = ("curll-words", "kuperman")
