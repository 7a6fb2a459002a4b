"""The verify stage's logic: filter the generated instances, then measure what is kept.

Contract of :func:`verify`: takes the generate stage's tables (contexts, ir, cqa, csqa), its
generations (for the unparsed requests), an encoder and the settings; returns the kept
tables (same schemas, same row order), one rejects table (every dropped row with its
reason) and the metrics of paper Appendix B:

- ``counts[type]``: rows in, kept, and dropped per reason, with ``in == kept + sum(dropped)``
  (an unparsed CQA/CSQA request counts as the pairs it should have made);
- ``yields[type][stage]``: the same per stage (see :mod:`curll.yields`), with examples;
- ``dedup[type][stage]``: share of a stage's passages / IR pairs that are near-duplicates of
  another in the same stage; ``dedup_pairs[type]["i-j"]``: share of stage j's texts with a
  near-duplicate in stage i (both measured after exact-duplicate removal);
- ``diversity[type][stage]`` and ``diversity_pairs[type]["i-j"]``: 1 / gzip ratio of the kept texts;
- ``readability[type][stage][metric]``: mean and std of six textstat grades on a seeded sample.

- ``content[type][stage]``: the share passing each content check (seed word, on topic,
  grounded, not degenerate; :mod:`curll.verify.content`), measured on the rows that reach them.

Order of checks: unparsed requests, empty fields, passage length, content checks
(degenerate, seed word, on topic), exact duplicates (first kept), near duplicates within a
stage (when ``semantic.drop``); then QA pairs of dropped passages, sets of the wrong size,
empty pairs, content checks (degenerate, grounded for CQA) and exact duplicates within a
passage.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from curll.config.verify import ContentChecks, SemanticParams, VerifyParams, WordRange
from curll.verify import content
from curll.verify import filters as flt
from curll.verify.dedup import choose_index, cross_rate, exact_duplicates, near_duplicates
from curll.verify.diversity import diversity, sample_indices
from curll.verify.encoder import Encoder
from curll.verify.readability import score, summarise
from curll.yields import measure

TABLES = {"context": "contexts", "ir": "ir", "cqa": "cqa", "csqa": "csqa"}


@dataclass(frozen=True)
class VerifyResult:
    kept: dict[str, pd.DataFrame]  # by type: context, ir, cqa, csqa
    rejects: pd.DataFrame
    metrics: dict[str, Any]


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(["stage", "indicator_id", "instance_id"], kind="stable").reset_index(drop=True)


def encode(encoder: Encoder, texts: list[str], *, batch: int, desc: str) -> np.ndarray:
    parts = [encoder.encode(texts[i : i + batch]) for i in tqdm(range(0, len(texts), batch), desc=desc)]
    return np.concatenate(parts) if parts else np.zeros((0, 1), dtype=np.float32)


def _semantic(
    kind: str, df: pd.DataFrame, encoder: Encoder, p: SemanticParams, metrics: dict[str, Any]
) -> dict[str, str]:
    """Near-duplicate flags within each stage; fills dedup / dedup_pairs metrics."""
    texts = flt.texts_of(kind, df)
    vectors = encode(encoder, texts, batch=p.batch_size, desc=f"verify: encode {kind}")
    by_stage = {s: np.flatnonzero(df["stage"].to_numpy() == s) for s in sorted(set(df["stage"]))}
    flags: dict[str, str] = {}
    rates: dict[str, float] = {}
    for stage, pos in by_stage.items():
        ids = df["instance_id"].iloc[pos].tolist()
        index = choose_index(p.index, len(pos), p.auto_above)
        dups = near_duplicates(ids, [texts[i] for i in pos], vectors[pos], threshold=p.threshold, index=index)
        rates[str(stage)] = round(len(dups) / len(pos), 6)
        flags.update({d.id: f"near_duplicate: dup of {d.of} ({d.score:.3f})" for d in dups})
    pairs = {}
    for (si, pi), (sj, pj) in combinations(by_stage.items(), 2):
        a = ([texts[i] for i in pi], vectors[pi])
        b = ([texts[j] for j in pj], vectors[pj])
        index = choose_index(p.index, len(pi), p.auto_above)  # built on stage si's texts
        pairs[f"{si}-{sj}"] = round(cross_rate(a, b, threshold=p.threshold, index=index), 6)
    metrics["dedup"][kind] = rates
    metrics["dedup_pairs"][kind] = pairs
    return flags if p.drop else {}


def _topic_scores(
    kind: str, df: pd.DataFrame, encoder: Encoder, topics: Mapping[str, str], batch: int
) -> np.ndarray:
    """For every instance, the share of the other indicators it is less similar to than to its
    own (cosine under the encoder): 1.0 when its own is the closest of all, ~0.5 for a text no
    closer to its own indicator than to a random one. A relative score, since static-embedding
    cosines share a large common component. With one indicator only, every score is 1.0."""
    if df.empty:
        return np.zeros(0)
    ids = sorted(topics)
    if len(ids) < 2:
        return np.ones(len(df))
    ind = encode(encoder, [topics[i] for i in ids], batch=batch, desc=f"verify: encode indicators ({kind})")
    row_of = {i: r for r, i in enumerate(ids)}
    own = np.array([row_of[i] for i in df["indicator_id"]])
    mine = encode(encoder, flt.texts_of(kind, df), batch=batch, desc=f"verify: encode {kind} for topics")
    out = np.empty(len(df))
    for start in range(0, len(df), 4096):  # (rows x indicators) similarities, a block at a time
        sims = mine[start : start + 4096] @ ind.T
        mine_own = sims[np.arange(len(sims)), own[start : start + 4096]]
        out[start : start + 4096] = (sims < mine_own[:, None]).sum(axis=1) / (len(ids) - 1)
    return out


def _filter(
    tables: dict[str, pd.DataFrame],
    encoder: Encoder,
    p: VerifyParams,
    words: WordRange,
    qa: dict[str, int],
    checks: ContentChecks,
    topics: Mapping[str, str],
) -> tuple[dict[str, pd.DataFrame], list[pd.DataFrame], dict[str, Any]]:
    metrics: dict[str, Any] = {"content": {}, "dedup": {}, "dedup_pairs": {}}
    kept: dict[str, pd.DataFrame] = {}
    rejects: list[pd.DataFrame] = []
    n, limit = checks.ngram, float(checks.max_repeated)

    def step(kind: str, df: pd.DataFrame, flags: dict[str, str]) -> pd.DataFrame:
        df, gone = flt.drop(df, kind, flags)
        rejects.append(gone)
        return df

    for kind, basic in (
        ("context", [flt.not_empty("text"), flt.word_range("text", words.min, words.max)]),
        ("ir", [flt.not_empty("instruction", "response")]),
    ):
        df = _sorted(tables[kind])
        df = step(kind, df, flt.flag(df, basic))
        scores = _topic_scores(kind, df, encoder, topics, p.semantic.batch_size)
        table = content.check_table(kind, df, passages={}, topic_scores=scores, ngram=n, repeat_limit=limit)
        metrics["content"][kind] = content.rates(df, table, checks)
        df = step(kind, df, content.flags(kind, df, table, checks))
        repeats = exact_duplicates(df["instance_id"].tolist(), flt.texts_of(kind, df))
        df = step(kind, df, {i: f"exact_duplicate: dup of {o}" for i, o in repeats.items()})
        kept[kind] = step(kind, df, _semantic(kind, df, encoder, p.semantic, metrics))
    passages = dict(zip(kept["context"]["instance_id"], kept["context"]["text"], strict=True))
    for kind in ("cqa", "csqa"):
        df = (
            tables[kind].sort_values(["stage", "context_id", "q_index"], kind="stable").reset_index(drop=True)
        )
        df = step(kind, df, flt.orphans(df, kept["context"]["instance_id"]))
        df = step(kind, df, flt.qa_count(df, qa[kind]))
        df = step(kind, df, flt.flag(df, [flt.not_empty("question", "answer")]))
        table = content.check_table(
            kind, df, passages=passages, topic_scores=None, ngram=n, repeat_limit=limit
        )
        metrics["content"][kind] = content.rates(df, table, checks)
        df = step(kind, df, content.flags(kind, df, table, checks))
        dups: dict[str, str] = {}
        for _, group in df.groupby("context_id", sort=False):
            found = exact_duplicates(group["instance_id"].tolist(), flt.texts_of(kind, group))
            dups.update({i: f"exact_duplicate: dup of {o}" for i, o in found.items()})
        kept[kind] = step(kind, df, dups)
    return kept, rejects, metrics


def _measure(kept: dict[str, pd.DataFrame], p: VerifyParams, metrics: dict[str, Any]) -> None:
    metrics.update(diversity={}, diversity_pairs={}, readability={})
    for kind, df in kept.items():
        texts = flt.texts_of(kind, df)
        stage_of = df["stage"].to_numpy()
        stages = sorted(set(stage_of.tolist()))
        sample: dict[int, list[str]] = {}
        for s in stages:
            pos = np.flatnonzero(stage_of == s)
            keep = pos[sample_indices(len(pos), p.diversity.sample, p.diversity.seed + s)]
            sample[s] = [texts[i] for i in keep]
        metrics["diversity"][kind] = {str(s): round(diversity(t), 6) for s, t in sample.items()}
        metrics["diversity_pairs"][kind] = {
            f"{a}-{b}": round(diversity(sample[a] + sample[b]), 6) for a, b in combinations(stages, 2)
        }
        grades: dict[str, Any] = {}
        for s in tqdm(stages, desc=f"verify: readability {kind}"):
            pos = np.flatnonzero(stage_of == s)
            pick = pos[sample_indices(len(pos), p.readability.sample, p.readability.seed + s)]
            scores = score([texts[i] for i in pick], workers=p.readability.workers)
            grades[str(s)] = summarise(scores)
        metrics["readability"][kind] = grades


def _units(kept: dict[str, pd.DataFrame], rejects: pd.DataFrame, qa_pairs: dict[str, int]) -> pd.DataFrame:
    """One row per kept or dropped instance for :func:`curll.yields.measure`; an unparsed QA
    request weighs as many pairs as it should have made."""
    weight = [
        qa_pairs.get(t, 1) if r == "unparsed" else 1
        for t, r in zip(rejects["type"], rejects["reason"], strict=True)
    ]
    reason = rejects["reason"] + ": " + rejects["detail"]
    gone = pd.DataFrame({"stage": rejects["stage"], "type": rejects["type"], "kept": False,
                         "reason": reason, "weight": weight})  # fmt: skip
    parts = [gone] + [
        pd.DataFrame({"stage": df["stage"], "type": kind, "kept": True, "reason": "", "weight": 1})
        for kind, df in kept.items()
    ]
    return pd.concat(parts, ignore_index=True)


def verify(
    tables: dict[str, pd.DataFrame],
    generations: pd.DataFrame,
    encoder: Encoder,
    p: VerifyParams,
    *,
    words: WordRange,
    qa_pairs: dict[str, int],
    checks: ContentChecks,
    topics: Mapping[str, str],
) -> VerifyResult:
    """See the module docstring; ``qa_pairs`` is the expected set size for "cqa" and "csqa";
    ``checks`` the content checks of the active profile; ``topics`` maps indicator ids to the
    text an instance must stay close to (:func:`curll.verify.content.indicator_text`)."""
    kept, rejects, metrics = _filter(tables, encoder, p, words, qa_pairs, checks, topics)
    all_rejects = pd.concat([flt.unparsed(generations), *rejects], ignore_index=True)
    yields = measure(
        _units(kept, all_rejects, qa_pairs), zip(generations["stage"], generations["task"], strict=True)
    )
    counts: dict[str, Any] = {}
    for kind in kept:
        per_stage = yields.get(kind, {}).values()
        dropped: Counter[str] = Counter()
        for g in per_stage:
            dropped.update(g["reasons"])
        counts[kind] = {
            "in": sum(g["in"] for g in per_stage),
            "kept": sum(g["kept"] for g in per_stage),
            "dropped": dict(sorted(dropped.items())),
        }
    metrics = {"counts": counts, "yields": yields, **metrics}
    _measure(kept, p, metrics)
    return VerifyResult(kept, all_rejects, metrics)


def plot_tables(metrics: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Per-stage trends for DVC plots: diversity, dedup and Flesch-Kincaid grade by type."""

    def frame(section: dict[str, dict[str, Any]], pick: Any = lambda v: v) -> pd.DataFrame:
        stages = sorted({int(s) for per in section.values() for s in per})
        return pd.DataFrame(
            {"stage": stages, **{k: [pick(per.get(str(s))) for s in stages] for k, per in section.items()}}
        )

    def fk(v: Any) -> Any:
        return None if v is None else v["flesch_kincaid"]["mean"]

    return {
        "diversity": frame(metrics["diversity"]),
        "dedup": frame(metrics["dedup"]),
        "readability": frame(metrics["readability"], fk),
    }
