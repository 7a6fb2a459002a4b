"""What the content checks of generated instances measure: is it about its seed, its passage
and its indicator, and is it text at all rather than a loop or an echo?

The checks themselves (each a reason code, a threshold param, the types it applies to and its
rate) are declared in :mod:`curll.verify.checks`; this module holds the measures they read.
:mod:`curll.verify.content_table` measures a batch. Generate runs the checks on an instance's
own texts (:func:`text_check`: degenerate, short_prompt, not_english) before it accepts an
answer, with the same functions and thresholds, so the two stages cannot disagree on them.

- ``seed_word``: the vocabulary word of the seed appears in the passage (or in the IR
  pair), in any regular inflection (garden, gardens; run, running, ran is *not* found:
  irregular forms are missed, which errs towards dropping);
- ``grounded`` (CQA): the share of the answer's content words found in its passage,
  compared on crude stems; an answer with no content words ("Yes.") counts as grounded;
- ``on_topic``: the share of the other indicators of the taxonomy that the instance is less
  similar to than to its own (cosine under the verify encoder; passages: the passage, IR:
  instruction and response). Relative, because static-embedding cosines share a large
  common component: an off-topic story scored 0.51 against a counting indicator, an
  on-topic answer 0.25;
- ``degenerate``: a repetition loop (the share of repeated word n-grams in any field above
  a limit), a passage that only restates its topic, or a pair whose answer repeats its
  question (normalised equality or word-set Jaccard >= 0.8);
- ``short_prompt`` (IR, CQA, CSQA): an instruction or question of fewer than
  ``min_prompt_words`` words (a bare seed word, "Question 1");
- ``not_english``: the share of an instance's words that are English dictionary words
  (:mod:`curll.lexicon`) below a limit (another language, invented words).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from curll.config.verify import ContentChecks
from curll.instances import spec
from curll.lexicon import english_share_of, foreign_words
from curll.text import SPELLINGS, words, words_any_script
from curll.verify.checks import verdict
from curll.verify.verdict import Drop, Verdict

_STOP = (
    "a an the and or but if then so of to in on at by for with from as is are was were be been being "
    "it its it's this that these those he she they we you i me my your his her their our them him us "
    "do does did not no yes can could will would should may might must have has had what who whom "
    "which when where why how there here all any some very just also too than about into out up down "
    "over under again more most much many such only own same other each few both"
)
STOPWORDS = frozenset(_STOP.split())
_SUFFIXES = ("ingly", "edly", "ing", "ies", "ied", "ier", "iest", "est", "ers", "er", "ed", "es", "ly", "s")


def stem(word: str) -> str:
    """A crude stem, the same for a word's regular forms: a common suffix off (stories ->
    story, running -> run, stopped -> stop), then one final e (make, making -> mak)."""
    for pattern, repl in SPELLINGS:  # organise, organising -> organize, organizing
        if len(word) > 5:
            word = pattern.sub(repl, word)
    base = word
    for suf in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= (2 if suf in ("ies", "ied") else 3):
            base = word[: -len(suf)]
            if suf in ("ies", "ied", "ier", "iest"):
                base += "y"
            elif len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiouls":
                base = base[:-1]
            break
    return base[:-1] if base.endswith("e") and len(base) > 3 else base


def has_word(text: str, word: str) -> bool:
    """Does ``text`` contain ``word`` (a lemma, possibly several words) in a regular form?"""
    target = [stem(w) for w in words(word)]
    if not target:
        return True
    stems = [stem(w) for w in words(text)]
    n = len(target)
    return any(stems[i : i + n] == target for i in range(len(stems) - n + 1))


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS and len(w) > 2 and not w.isdigit()]


def stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words(text))


def grounding(answer: str, passage: str | frozenset[str]) -> float:
    """Share of the answer's content-word stems that occur in the passage (1.0 with none);
    ``passage``: its text, or its :func:`stems` (a passage's pairs share them)."""
    mine = {stem(w) for w in content_words(answer)}
    if not mine:
        return 1.0
    theirs = stems(passage) if isinstance(passage, str) else passage
    return len(mine & theirs) / len(mine)


def repeated_ngrams(text: str, n: int) -> float:
    """Share of the word n-grams of ``text`` that repeat an earlier one (0 for short texts)."""
    w = words(text)
    grams = [tuple(w[i : i + n]) for i in range(len(w) - n + 1)]
    if len(grams) < 2 * n:
        return 0.0
    return 1.0 - len(set(grams)) / len(grams)


def same_text(a: str, b: str) -> bool:
    """``b`` repeats ``a``: equal once normalised, or word sets with Jaccard >= 0.8."""
    wa, wb = words(a), words(b)
    if wa == wb:
        return True
    sa, sb = set(wa), set(wb)
    return bool(sa and sb) and len(sa & sb) / len(sa | sb) >= 0.8


def degenerate(fields: Mapping[str, str], *, n: int, limit: float, pair: tuple[str, str] | None) -> Verdict:
    """Drop a degenerate instance: a field that loops, or (``pair``: (prompt field, reply field),
    question/answer or instruction/response) a reply that repeats its prompt."""
    for name, text in fields.items():
        rate = repeated_ngrams(text, n)
        if rate > limit:
            return Drop("degenerate", f"{name} repeats itself ({rate:.0%} of its {n}-grams are repeats)")
    if pair is not None and same_text(fields[pair[0]], fields[pair[1]]):
        return Drop("degenerate", f"the {pair[1]} repeats the {pair[0]}")
    return None


def _english(texts: Mapping[str, str], fields: Sequence[str]) -> float:
    """The English share of ``fields`` pooled, 0 when one is in another script (each split once)."""
    split = [words_any_script(texts[f]) for f in fields]
    return 0.0 if any(map(foreign_words, split)) else english_share_of([w for ws in split for w in ws])


def measure_texts(
    kind: str, texts: Mapping[str, str], checks: ContentChecks, *, english_of: Sequence[str] = ()
) -> dict[str, Any]:
    """What the checks on an instance's own texts look at. ``texts``: its type's text columns
    (:attr:`curll.instances.InstanceType.columns`), checked for loops, with its (prompt, reply)
    pair that must differ. Returns ``degenerate`` (a Drop or None, with ``checks.ngram`` and
    ``checks.max_repeated``), ``english`` (the share of dictionary words in the fields
    ``english_of``, default all; 0 when one of them is written in another script, as a one-word
    answer in Cyrillic to an English question would pass the pooled share) and ``prompt_words``
    (the words of the prompt, an instruction or question; NaN for a type whose prompt is no
    request: a passage)."""
    t = spec(kind)
    return {
        "degenerate": degenerate(
            texts, n=checks.ngram, limit=float(checks.max_repeated), pair=(t.prompt, t.reply)
        ),
        "english": _english(texts, english_of or t.columns),
        "prompt_words": len(words(texts[t.prompt])) if t.asks else math.nan,
    }


def text_check(
    kind: str, texts: Mapping[str, str], checks: ContentChecks, *, english_of: Sequence[str] = ()
) -> Verdict:
    """The checks on one instance's own texts (those generate asks again for: degenerate,
    short_prompt, not_english; :data:`curll.verify.checks.CHECKS`) on its :func:`measure_texts`,
    as generate runs them before it accepts an answer (:func:`curll.generate.tasks.form`)."""
    return verdict(kind, measure_texts(kind, texts, checks, english_of=english_of), checks, retry_only=True)


def indicator_text(row: Mapping[str, Any]) -> str:
    """What an instance is compared with for ``on_topic``: sub-skill, goal and indicator."""
    return f"{row['subskill']}: {row['goal']}. {row['indicator']}"
