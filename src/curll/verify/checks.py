"""The content checks of verify, each declared once as a :class:`ContentCheck` in :data:`CHECKS`.

A check owns: its reason code (a drop's ``reason``, one of
:data:`curll.schemas.quality.VERIFY_REASONS`), its threshold param (a field of ``verify.content``,
:class:`curll.config.verify.ContentChecks`), the column of
:func:`curll.verify.content_table.check_table` it reads, its verdict, the instance types it
applies to (:mod:`curll.instances`), whether generate asks again when an answer fails it, and
the rate it adds to verify's metrics (``content[type][stage][rate]``). :func:`verdict` runs the
checks in :data:`CHECKS` order and the first to fail names the drop; :class:`Rates` adds up every
check's rate. A new check is one entry here (its measure in ``check_table``, its code in
``VERIFY_REASONS``, its threshold in ``ContentChecks``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from curll.config.verify import ContentChecks
from curll.instances import InstanceType, spec
from curll.schemas.quality import VERIFY_REASONS
from curll.verify.verdict import Drop, Verdict

#: (rows counted, rows it is measured on) of a check's rate in one stage's table rows
Count = Callable[[pd.Series, ContentChecks], tuple[float, float]]


@dataclass(frozen=True)
class ContentCheck:
    code: str  # the reason of its drop
    threshold: str  # its param in verify.content
    measure: str  # the check_table column it reads
    #: (measured value, thresholds, type, row) -> why the row fails, for people; None: it passes
    fails: Callable[[Any, ContentChecks, InstanceType, Mapping[str, Any]], str | None]
    applies: Callable[[InstanceType], bool]  # the instance types it checks
    rate: str = ""  # its name in verify's content metrics ("": none)
    count: Count | None = None  # (rows its rate counts, rows it is measured on)
    retry: bool = False  # generate asks again when an answer fails it (a new attempt can fix it)
    shown: Callable[[ContentChecks], bool] = lambda _: True  # its rate is reported (else None)

    def __post_init__(self) -> None:
        if self.code not in VERIFY_REASONS or self.threshold not in ContentChecks.model_fields:
            raise ValueError(f"check {self.code!r}: a code of VERIFY_REASONS and a field of verify.content")
        if bool(self.rate) != (self.count is not None):
            raise ValueError(f"check {self.code!r}: a rate needs its count, and a count its rate")


def _passing(values: pd.Series, least: float) -> tuple[float, float]:
    kept = values.dropna()
    return float((kept >= least).sum()), float(len(kept))


def _looped(looped: Drop | None, *_: Any) -> str | None:
    return None if looped is None else looped.detail  # content.degenerate measured it, with its reason


def _short(n: float, p: ContentChecks, t: InstanceType, _row: Mapping[str, Any]) -> str | None:
    if not n < p.min_prompt_words:
        return None
    return f"the {t.prompt} has {n:.0f} word{'' if n == 1 else 's'} (minimum {p.min_prompt_words})"


def _english(share: float, p: ContentChecks, _t: InstanceType, _row: Mapping[str, Any]) -> str | None:
    if not share < p.english:
        return None
    return f"{share:.0%} of its words are English words (minimum {p.english:.0%})"


def _seed_word(found: bool | None, p: ContentChecks, _t: InstanceType, row: Mapping[str, Any]) -> str | None:
    return f"{row['word']!r} is not in the text" if p.seed_word and found is False else None


def _on_topic(score: float, p: ContentChecks, _t: InstanceType, _row: Mapping[str, Any]) -> str | None:
    if not (p.on_topic > 0 and score < p.on_topic):
        return None
    return f"closer to its own indicator than to only {score:.0%} of the others (minimum {p.on_topic:.0%})"


def _grounded(share: float, p: ContentChecks, _t: InstanceType, _row: Mapping[str, Any]) -> str | None:
    if not (p.grounded > 0 and share < p.grounded):
        return None
    return f"{share:.0%} of the answer's content words are in its passage (minimum {p.grounded:.0%})"


def _every(_t: InstanceType) -> bool:
    return True


#: every content check, in the order they are tried (the first to fail names the drop)
CHECKS: tuple[ContentCheck, ...] = (
    ContentCheck("degenerate", "max_repeated", "degenerate", _looped, _every, "degenerate",
                 lambda d, _p: (float(d.notna().sum()), float(len(d))), retry=True),
    ContentCheck("short_prompt", "min_prompt_words", "prompt_words", _short, lambda t: t.asks, retry=True),
    ContentCheck("not_english", "english", "english", _english, _every, "english",
                 lambda e, p: (float((e >= p.english).sum()), float(len(e))), retry=True),
    ContentCheck("seed_word", "seed_word", "seed_word", _seed_word, lambda t: bool(t.seed_word), "seed_word",
                 lambda f, _p: (float(f.dropna().astype(bool).sum()), float(len(f.dropna())))),
    ContentCheck("off_topic", "on_topic", "on_topic", _on_topic, lambda t: t.seeded, "on_topic",
                 lambda s, p: _passing(s, p.on_topic), shown=lambda p: p.on_topic > 0),
    ContentCheck("ungrounded", "grounded", "grounding", _grounded, lambda t: t.grounded, "grounded",
                 lambda g, p: _passing(g, p.grounded)),
)  # fmt: skip
#: the rates verify reports: each check's, and the mean on-topic score
RATES = (*(c.rate for c in CHECKS if c.rate), "on_topic_mean")


def verdict(
    kind: str, measured: Mapping[str, Any], checks: ContentChecks, *, retry_only: bool = False
) -> Verdict:
    """The first check of :data:`CHECKS` that drops a row of ``kind`` (``measured``: a row of
    :func:`curll.verify.content_table.check_table`, with the seed's ``word``), or None;
    ``retry_only``: only the checks generate asks again for (an instance's own texts)."""
    t = spec(kind)
    for c in CHECKS:
        if (c.retry or not retry_only) and c.measure in measured and c.applies(t):
            why = c.fails(measured[c.measure], checks, t, measured)
            if why is not None:
                return Drop(c.code, why)
    return None


class Rates:
    """Per stage: rows checked, and each check's rate (None where it is not shown or measured on
    nothing) and the mean on-topic score, added a batch at a time: :meth:`add` takes a batch
    and its :func:`~curll.verify.content_table.check_table`, with the thresholds of ``checks``."""

    def __init__(self, checks: ContentChecks) -> None:
        self.checks = checks
        self._sums: dict[int, defaultdict[str, float]] = {}

    def add(self, df: pd.DataFrame, table: pd.DataFrame) -> None:
        stages = df["stage"].to_numpy()
        for stage in np.unique(stages):
            t = table[stages == stage]
            s = self._sums.setdefault(int(stage), defaultdict(float))
            s["n"] += len(t)
            for c in CHECKS:
                if c.count is not None:
                    hits, of = c.count(t[c.measure], self.checks)
                    s[c.rate] += hits
                    s[f"{c.rate}_of"] += of
            topic = t["on_topic"].dropna()
            s["on_topic_mean"] += float(topic.sum())
            s["on_topic_mean_of"] += len(topic)

    def result(self) -> dict[str, dict[str, Any]]:
        def share(ok: float, n: float) -> float | None:
            return round(ok / n, 6) if n else None

        shown = {c.rate: c.shown(self.checks) for c in CHECKS}
        return {
            str(stage): {"n": int(s["n"]), **{
                r: share(s[r], s[f"{r}_of"]) if shown.get(r, True) else None for r in RATES
            }}
            for stage, s in sorted(self._sums.items())
        }  # fmt: skip
