"""The verify stage's checks, applied a batch of rows at a time (the first of its two passes).

A :class:`Screen` takes one instance type's batches in table order and keeps a verdict:
``{instance id: Drop}`` for every dropped row (:mod:`curll.verify.verdict`; a kept row is
absent), the content rates per stage (:class:`curll.verify.checks.Rates`) and the
rows in and dropped per stage.
Order of checks, the first failing one naming the drop:

- seeded types, passages and IR (:meth:`Screen.add`): empty fields (the type's ``compared``
  columns), a passage's length (its ``words`` column); the content checks (degenerate, short
  prompt, not English, seed word, on topic); exact duplicates of any earlier row of the
  table; then, once every batch is in, :meth:`Screen.semantic`: near duplicates within a
  stage (when ``semantic.drop``), from the vectors of the rows still kept, which wait on disk
  (:class:`~curll.verify.scratch.VectorFile`). Each row is encoded once: that vector serves
  the on-topic score and the near-duplicate search;
- types made on a passage, QA pairs (:meth:`Screen.add_pairs`, batches cut at passage
  boundaries): pairs of a dropped passage, sets of the wrong size, empty fields, content
  checks (grounded: CQA, against its passage's text), exact duplicates within a passage. A
  passage's pairs must be adjacent in the table (generate_merge writes a request's pairs
  together): if not, an error names the row.

Memory: a batch, the verdict, one hash per distinct text (exact duplicates), the ids of the
rows on disk, and one stage's vectors during :meth:`Screen.semantic`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from curll.config.verify import ContentChecks, VerifyParams, WordRange
from curll.errors import CurllError
from curll.instances import spec
from curll.verify import content_table
from curll.verify import filters as flt
from curll.verify.checks import Rates
from curll.verify.dedup import CrossIndex, ExactIndex, choose_index, exact_duplicates, near_duplicates
from curll.verify.encoder import Encoder
from curll.verify.scratch import VectorFile
from curll.verify.verdict import Drop


@dataclass(frozen=True)
class Settings:
    """What verify needs besides the data: its params, the passage length range and content
    checks of the active profile, the list sizes (``generate.pairs``: {"cqa": n, "csqa": m})
    and the text of every indicator (:func:`curll.verify.content.indicator_text`) for the
    on-topic check."""

    params: VerifyParams
    words: WordRange
    qa_pairs: Mapping[str, int]
    checks: ContentChecks
    topics: Mapping[str, str]


def encode(encoder: Encoder, texts: list[str], *, batch: int) -> np.ndarray:
    parts = [encoder.encode(texts[i : i + batch]) for i in range(0, len(texts), batch)]
    return np.concatenate(parts) if parts else np.zeros((0, 1), dtype=np.float32)


class Topics:
    """On-topic scores: for every instance, the share of the other indicators it is less similar
    to than to its own (cosine under the encoder): 1.0 when its own is the closest of all, ~0.5
    for a text no closer to its own indicator than to a random one. A relative score, since
    static-embedding cosines share a large common component. With one indicator, always 1.0."""

    def __init__(self, encoder: Encoder, topics: Mapping[str, str], batch: int) -> None:
        self._ids = sorted(topics)
        self._row = {i: r for r, i in enumerate(self._ids)}
        many = len(self._ids) >= 2
        self._vectors = encode(encoder, [topics[i] for i in self._ids], batch=batch) if many else None

    def scores(self, mine: np.ndarray, indicator_ids: pd.Series) -> np.ndarray:
        """Scores of the rows ``mine`` (their vectors) whose own indicators are ``indicator_ids``."""
        if self._vectors is None:
            return np.ones(len(mine))
        own = np.array([self._row[i] for i in indicator_ids], dtype=np.int64)
        sims = mine @ self._vectors.T  # (rows, indicators)
        mine_own = sims[np.arange(len(sims)), own]
        closer = (sims < mine_own[:, None]).sum(axis=1)
        return np.asarray(closer / (len(self._ids) - 1), dtype=np.float64)


class Screen:
    """One type's first pass; see the module docstring. ``scratch``: a folder for its vectors;
    ``source``: the table's file (named in errors)."""

    def __init__(
        self,
        kind: str,
        settings: Settings,
        encoder: Encoder,
        topics: Topics,
        scratch: Path,
        source: str | Path | None = None,
    ) -> None:
        self.kind, self.settings, self.encoder, self.topics = kind, settings, encoder, topics
        self.spec = spec(kind)
        self.source = source  # the table's file, named in errors
        self.verdict: dict[str, Drop] = {}
        self.rates = Rates(settings.checks)
        self.rows_in: Counter[int] = Counter()
        self.dropped: Counter[int] = Counter()
        self._exact = ExactIndex()
        self._vectors = VectorFile(scratch / f"{kind}.f32")
        self._contexts_seen: set[str] = set()

    def kept_per_stage(self) -> dict[int, int]:
        return {s: n - self.dropped[s] for s, n in sorted(self.rows_in.items())}

    def _drop(self, df: pd.DataFrame, flags: Mapping[str, Drop]) -> pd.DataFrame:
        if not flags:
            return df
        hit = flt.flagged(df, flags)
        self.verdict.update(flags)
        self.dropped.update(df["stage"].to_numpy()[hit].tolist())
        return df[~hit]

    def _content(
        self, df: pd.DataFrame, passages: Mapping[str, str], topic: np.ndarray | None
    ) -> pd.DataFrame:
        checks = self.settings.checks
        table = content_table.check_table(self.kind, df, passages=passages, topic_scores=topic, checks=checks)
        self.rates.add(df, table)
        return self._drop(df, content_table.flags(self.kind, df, table, checks))

    def add(self, df: pd.DataFrame) -> None:
        """A batch of instances of a seeded type (passages, IR pairs)."""
        p, words, t = self.settings.params, self.settings.words, self.spec
        self.rows_in.update(df["stage"].tolist())
        basic = [flt.not_empty(*t.required)]
        if t.words:  # a passage's length
            basic.append(flt.word_range(t.words, words.min, words.max))
        df = self._drop(df, flt.flag(df, basic))
        if not len(df):
            return
        texts = flt.texts_of(self.kind, df)
        vectors = encode(self.encoder, texts, batch=p.semantic.batch_size)
        row_of = dict(zip(df["instance_id"], range(len(df)), strict=True))
        df = self._content(df, {}, self.topics.scores(vectors, df["indicator_id"]))
        repeats = self._exact.add(df["instance_id"].tolist(), [texts[row_of[i]] for i in df["instance_id"]])
        df = self._drop(df, {i: Drop("exact_duplicate", f"dup of {o}") for i, o in repeats.items()})
        rows = [row_of[i] for i in df["instance_id"]]
        self._vectors.add(df["instance_id"].tolist(), df["stage"].to_numpy(), vectors[rows])

    def add_pairs(self, df: pd.DataFrame, kept_contexts: set[str], passages: Mapping[str, str]) -> None:
        """A batch of instances made on passages (QA pairs) holding whole passages' sets;
        ``kept_contexts``: the ids of the kept passages; ``passages``: their texts (for
        grounding), at least this batch's."""
        link = self.spec.link
        self._check_adjacent(df)
        self.rows_in.update(df["stage"].tolist())
        df = self._drop(df, flt.orphans(df, kept_contexts, link))
        df = self._drop(df, flt.qa_count(df, self.settings.qa_pairs[self.kind], link))
        df = self._drop(df, flt.flag(df, [flt.not_empty(*self.spec.required)]))
        df = self._content(df, passages, None)
        dups: dict[str, Drop] = {}
        for _, group in df.groupby(link, sort=False):
            found = exact_duplicates(group["instance_id"].tolist(), flt.texts_of(self.kind, group))
            dups.update({i: Drop("exact_duplicate", f"dup of {o}") for i, o in found.items()})
        self._drop(df, dups)

    def _check_adjacent(self, df: pd.DataFrame) -> None:
        link = self.spec.link
        ids = df[link]
        starts = ids.ne(ids.shift())
        for row, cid in zip(df.index[starts.to_numpy()], ids[starts], strict=True):
            if cid in self._contexts_seen:
                raise CurllError(
                    f"the pairs of passage {cid} are not adjacent (generate_merge writes a "
                    "passage's pairs together)", file=self.source, row=int(row), field=link,
                )  # fmt: skip
            self._contexts_seen.add(cid)

    def semantic(self) -> tuple[dict[str, float], dict[str, float]]:
        """Near duplicates within each stage (dropped when ``semantic.drop``). Returns the share
        of each stage's rows that are near duplicates of another, and for every pair of stages
        "i-j" the share of stage j's rows with a near duplicate in stage i."""
        p = self.settings.params.semantic
        stages = self._vectors.stages()
        rates: dict[str, float] = {}
        for stage in tqdm(stages, desc=f"verify: near duplicates ({self.kind})"):
            ids, vectors = self._vectors.stage(stage)
            index = choose_index(p.index, len(ids), p.auto_above)
            dups = near_duplicates(ids, vectors, threshold=p.threshold, index=index)
            rates[str(stage)] = round(len(dups) / len(ids), 6)
            if p.drop:
                self.verdict.update(
                    {d.id: Drop("near_duplicate", f"dup of {d.of} ({d.score:.3f})") for d in dups}
                )
                self.dropped[stage] += len(dups)
        pairs: dict[str, float] = {}
        for n, si in enumerate(stages):
            a = self._vectors.stage(si)[1]
            earlier = CrossIndex(a, choose_index(p.index, len(a), p.auto_above))  # once for all later stages
            for sj in stages[n + 1 :]:
                b = self._vectors.stage(sj)[1]
                pairs[f"{si}-{sj}"] = round(earlier.rate(b, threshold=p.threshold), 6)
        return rates, pairs
