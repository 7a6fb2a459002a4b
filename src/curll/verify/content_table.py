"""The content checks over a batch of instances: the table of what each check measured and the
drops.

The checks are declared in :mod:`curll.verify.checks`, their measures are in
:mod:`curll.verify.content`. :func:`check_table` measures every row of a batch, :func:`flags`
turns the table into drops with :func:`~curll.verify.checks.verdict`, and
:class:`~curll.verify.checks.Rates` adds up, stage by stage, each check's rate (the ``content``
section of verify's metrics). Every check is measured on every row that reaches the content
checks, including rows that an earlier check drops.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from curll.artifacts import records
from curll.config.verify import ContentChecks
from curll.instances import spec
from curll.verify.checks import verdict
from curll.verify.content import grounding, has_word, measure_texts, stems
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
    :func:`~curll.verify.checks.verdict` drops."""
    out: dict[str, Drop] = {}
    for iid, word, t in zip(df["instance_id"], df["word"], records(table), strict=True):
        if (gone := verdict(kind, {**t, "word": word}, checks)) is not None:
            out[iid] = gone
    return out
