"""Content checks of generated instances: is it about its seed, its passage and its indicator,
and is it text at all rather than a loop or an echo?

Each check is a pure function of the text; :func:`check_table` applies them to a whole
table and returns one row per instance with the outcome of every check, which the verify
stage turns into drops (with reasons) and into rates per stage and type (DVC metrics):

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

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from curll.lexicon import english_share
from curll.text import SPELLINGS, words

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


def degenerate(fields: Mapping[str, str], *, n: int, limit: float, pair: tuple[str, str] | None) -> str:
    """The reason an instance is degenerate ("" when it is not); ``pair``: (prompt field, reply
    field) whose reply must not repeat the prompt (question/answer, instruction/response)."""
    for name, text in fields.items():
        rate = repeated_ngrams(text, n)
        if rate > limit:
            return f"degenerate: {name} repeats itself ({rate:.0%} of its {n}-grams are repeats)"
    if pair is not None and same_text(fields[pair[0]], fields[pair[1]]):
        return f"degenerate: the {pair[1]} repeats the {pair[0]}"
    return ""


#: per type: the text fields checked for loops, and the (prompt, reply) pair that must differ
FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, str] | None]] = {
    "context": (("expanded_topic", "text"), ("expanded_topic", "text")),
    "ir": (("instruction", "response"), ("instruction", "response")),
    "cqa": (("question", "answer"), ("question", "answer")),
    "csqa": (("question", "answer"), ("question", "answer")),
}


def check_table(
    kind: str,
    df: pd.DataFrame,
    *,
    passages: Mapping[str, str],
    topic_scores: Sequence[float] | np.ndarray | None,
    ngram: int,
    repeat_limit: float,
) -> pd.DataFrame:
    """One row per instance of ``df`` (same order): ``seed_word`` (bool, or None where not
    checked), ``grounding`` (float, CQA only), ``on_topic`` (cosine, or NaN), ``degenerate``
    (a reason or ""), ``english`` (share of dictionary words), ``prompt_words`` (words of the
    instruction or question; NaN for passages). ``passages``: context id -> passage text, for
    QA rows."""
    fields, pair = FIELDS[kind]
    out: dict[str, list[Any]] = {"seed_word": [], "grounding": [], "degenerate": [], "english": [],
                                 "prompt_words": []}  # fmt: skip
    passage_stems: dict[str, frozenset[str]] = {}
    for row in df[[*fields, "word", *(["context_id"] if kind in ("cqa", "csqa") else [])]].to_dict("records"):
        texts = {f: str(row[f]) for f in fields}
        if kind == "context":
            out["seed_word"].append(has_word(texts["text"], row["word"]))
        elif kind == "ir":
            out["seed_word"].append(has_word(texts["instruction"] + " " + texts["response"], row["word"]))
        else:
            out["seed_word"].append(None)
        if kind == "cqa":
            cid = row["context_id"]
            if cid not in passage_stems:  # once per passage, not once per pair
                passage_stems[cid] = stems(passages.get(cid, ""))
            out["grounding"].append(grounding(texts["answer"], passage_stems[cid]))
        else:
            out["grounding"].append(np.nan)
        out["degenerate"].append(degenerate(texts, n=ngram, limit=repeat_limit, pair=pair))
        out["english"].append(english_share(" ".join(texts.values())))
        out["prompt_words"].append(len(words(texts[pair[0]])) if pair and kind != "context" else np.nan)
    table = pd.DataFrame(out, index=df.index)
    table["on_topic"] = np.nan if topic_scores is None else np.asarray(topic_scores, dtype=float)
    return table


def indicator_text(row: Mapping[str, Any]) -> str:
    """What an instance is compared with for ``on_topic``: sub-skill, goal and indicator."""
    return f"{row['subskill']}: {row['goal']}. {row['indicator']}"


def flags(kind: str, df: pd.DataFrame, table: pd.DataFrame, checks: Any) -> dict[str, str]:
    """{instance id: reason} for the rows ``checks`` (a ContentChecks) drops, the first failed
    check naming it, in order: degenerate, short_prompt, not_english, seed_word, off_topic,
    ungrounded."""
    out: dict[str, str] = {}
    for iid, word, t in zip(df["instance_id"], df["word"], table.to_dict("records"), strict=True):
        if t["degenerate"]:
            out[iid] = t["degenerate"]
        elif t["prompt_words"] < checks.min_prompt_words:  # NaN (passages) compares False
            field = "instruction" if kind == "ir" else "question"
            n, least = t["prompt_words"], checks.min_prompt_words
            out[iid] = f"short_prompt: the {field} has {n:.0f} words (minimum {least})"
        elif t["english"] < checks.english:
            share, least_share = t["english"], checks.english
            out[iid] = f"not_english: {share:.0%} of its words are English words (minimum {least_share:.0%})"
        elif checks.seed_word and t["seed_word"] is False:
            out[iid] = f"seed_word: {word!r} is not in the text"
        elif checks.on_topic > 0 and t["on_topic"] < checks.on_topic:
            out[iid] = (
                f"off_topic: closer to its own indicator than to only {t['on_topic']:.0%} of the others "
                f"(minimum {checks.on_topic:.0%})"
            )
        elif kind == "cqa" and checks.grounded > 0 and t["grounding"] < checks.grounded:
            out[iid] = (
                f"ungrounded: {t['grounding']:.0%} of the answer's content words are in its passage "
                f"(minimum {checks.grounded:.0%})"
            )
    return out


class Rates:
    """Per stage: rows checked, and the share passing each check (None where it does not apply;
    ``on_topic_mean`` is the mean on-topic score), added a batch at a time: :meth:`add` takes a
    batch and its :func:`check_table`; ``checks`` is a ContentChecks."""

    def __init__(self, checks: Any) -> None:
        self.checks = checks
        self._sums: dict[int, defaultdict[str, float]] = {}

    def add(self, df: pd.DataFrame, table: pd.DataFrame) -> None:
        stages = df["stage"].to_numpy()
        for stage in np.unique(stages):
            t = table[stages == stage]
            seed, topic, ground = (t[c].dropna() for c in ("seed_word", "on_topic", "grounding"))
            s = self._sums.setdefault(int(stage), defaultdict(float))
            added = dict(
                n=len(t),
                seed_n=len(seed),
                seed_ok=int(seed.astype(bool).sum()),
                topic_n=len(topic),
                topic_ok=int((topic >= self.checks.on_topic).sum()),
                ground_n=len(ground),
                ground_ok=int((ground >= self.checks.grounded).sum()),
                degenerate=int((t["degenerate"] != "").sum()),
                english=int((t["english"] >= self.checks.english).sum()),
                topic_sum=float(topic.sum()),
            )
            for k, v in added.items():
                s[k] += v

    def result(self) -> dict[str, dict[str, Any]]:
        def share(ok: float, n: float) -> float | None:
            return round(ok / n, 6) if n else None

        return {
            str(stage): {
                "n": int(s["n"]),
                "seed_word": share(s["seed_ok"], s["seed_n"]),
                "on_topic": share(s["topic_ok"], s["topic_n"]) if self.checks.on_topic > 0 else None,
                "on_topic_mean": share(s["topic_sum"], s["topic_n"]),
                "grounded": share(s["ground_ok"], s["ground_n"]),
                "degenerate": share(s["degenerate"], s["n"]),
                "english": share(s["english"], s["n"]),
            }
            for stage, s in sorted(self._sums.items())
        }
