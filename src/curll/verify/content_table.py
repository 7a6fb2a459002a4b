"""The content checks over a batch of instances: the table of what each check measured, the
drops, and the rates per stage and type.

The checks themselves are in :mod:`curll.verify.content`. :func:`check_table` measures every
row of a batch, :func:`flags` turns the table into drops with
:func:`~curll.verify.content.row_verdict`, and :class:`Rates` adds up, stage by stage, the
share of rows passing each check (the ``content`` section of verify's metrics). Every check
is measured on every row that reaches the content checks, including rows that an earlier
check drops.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from curll.artifacts import records
from curll.config.verify import ContentChecks
from curll.instances import spec
from curll.verify.content import grounding, has_word, measure_texts, row_verdict, stems
from curll.verify.verdict import Drop


def check_table(
    kind: str,
    df: pd.DataFrame,
    *,
    passages: Mapping[str, str],
    topic_scores: Sequence[float] | np.ndarray | None,
    checks: ContentChecks,
) -> pd.DataFrame:
    """One row per instance of ``df`` (same order): ``seed_word`` (bool, or None where its type
    has no seed word columns), ``grounding`` (float, a type with grounded replies: CQA),
    ``on_topic`` (cosine, or NaN), and the :func:`~curll.verify.content.measure_texts` columns
    ``degenerate`` (a Drop or None), ``english``, ``prompt_words``.
    ``passages``: passage id -> passage text, for a type made on a passage."""
    t = spec(kind)
    out: dict[str, list[Any]] = {"seed_word": [], "grounding": [], "degenerate": [], "english": [],
                                 "prompt_words": []}  # fmt: skip
    passage_stems: dict[str, frozenset[str]] = {}
    for row in df[[*t.columns, "word", *([t.link] if t.on else [])]].to_dict("records"):
        texts = {f: str(row[f]) for f in t.columns}
        seen = has_word(" ".join(texts[c] for c in t.seed_word), row["word"]) if t.seed_word else None
        out["seed_word"].append(seen)
        if t.grounded:
            cid = row[t.link]
            if cid not in passage_stems:  # once per passage, not once per pair
                passage_stems[cid] = stems(passages.get(cid, ""))
            out["grounding"].append(grounding(texts[t.reply], passage_stems[cid]))
        else:
            out["grounding"].append(np.nan)
        for k, v in measure_texts(kind, texts, checks).items():
            out[k].append(v)
    table = pd.DataFrame(out, index=df.index)
    table["on_topic"] = np.nan if topic_scores is None else np.asarray(topic_scores, dtype=float)
    return table


def flags(kind: str, df: pd.DataFrame, table: pd.DataFrame, checks: ContentChecks) -> dict[str, Drop]:
    """{instance id: Drop} for the rows of ``df`` (its :func:`check_table`: ``table``) that
    :func:`~curll.verify.content.row_verdict` drops."""
    out: dict[str, Drop] = {}
    for iid, word, t in zip(df["instance_id"], df["word"], records(table), strict=True):
        if (gone := row_verdict(kind, t, checks, word)) is not None:
            out[iid] = gone
    return out


class Rates:
    """Per stage: rows checked, and the share passing each check (None where it does not apply;
    ``on_topic_mean`` is the mean on-topic score), added a batch at a time: :meth:`add` takes a
    batch and its :func:`check_table`. A share passing is measured on every row given, with
    the thresholds of ``checks``."""

    def __init__(self, checks: ContentChecks) -> None:
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
                degenerate=int(t["degenerate"].notna().sum()),
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
