"""The verify stage's logic: filter the generated instances, then measure what is kept.

Contract of :func:`verify`: takes the generate stage's tables (contexts, ir, cqa, csqa), its
generations (for the unparsed requests), an encoder and the settings; returns the kept
tables (same schemas, same row order), one rejects table (every dropped row with its
reason) and the metrics of paper Appendix B:

- ``counts[type]``: rows in, kept, and dropped per reason;
- ``dedup[type][stage]``: share of a stage's passages / IR pairs that are near-duplicates of
  another in the same stage; ``dedup_pairs[type]["i-j"]``: share of stage j's texts with a
  near-duplicate in stage i (both measured after exact-duplicate removal);
- ``diversity[type][stage]`` and ``diversity_pairs[type]["i-j"]``: 1 / gzip ratio of the kept texts;
- ``readability[type][stage][metric]``: mean and std of six textstat grades on a seeded sample.

Order of checks: unparsed requests, empty fields, passage length, exact duplicates (first
kept), near duplicates within a stage (when ``semantic.drop``); then QA pairs of dropped
passages, sets of the wrong size, empty pairs and exact duplicates within a passage.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from curll.config.verify import SemanticParams, VerifyParams, WordRange
from curll.verify import filters as flt
from curll.verify.dedup import cross_rate, exact_duplicates, near_duplicates
from curll.verify.diversity import diversity, sample_indices
from curll.verify.encoder import Encoder
from curll.verify.readability import score, summarise

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
        dups = near_duplicates(
            ids, [texts[i] for i in pos], vectors[pos], threshold=p.threshold, index=p.index
        )
        rates[str(stage)] = round(len(dups) / len(pos), 6)
        flags.update({d.id: f"near_duplicate: dup of {d.of} ({d.score:.3f})" for d in dups})
    pairs = {}
    for (si, pi), (sj, pj) in combinations(by_stage.items(), 2):
        a = ([texts[i] for i in pi], vectors[pi])
        b = ([texts[j] for j in pj], vectors[pj])
        pairs[f"{si}-{sj}"] = round(cross_rate(a, b, threshold=p.threshold, index=p.index), 6)
    metrics["dedup"][kind] = rates
    metrics["dedup_pairs"][kind] = pairs
    return flags if p.drop else {}


def _filter(
    tables: dict[str, pd.DataFrame], encoder: Encoder, p: VerifyParams, words: WordRange, qa: dict[str, int]
) -> tuple[dict[str, pd.DataFrame], list[pd.DataFrame], dict[str, Any]]:
    metrics: dict[str, Any] = {"dedup": {}, "dedup_pairs": {}}
    kept: dict[str, pd.DataFrame] = {}
    rejects: list[pd.DataFrame] = []

    def step(kind: str, df: pd.DataFrame, flags: dict[str, str]) -> pd.DataFrame:
        df, gone = flt.drop(df, kind, flags)
        rejects.append(gone)
        return df

    for kind, filters in (
        ("context", [flt.not_empty("text"), flt.word_range("text", words.min, words.max)]),
        ("ir", [flt.not_empty("instruction", "response")]),
    ):
        df = _sorted(tables[kind])
        df = step(kind, df, flt.flag(df, filters))
        repeats = exact_duplicates(df["instance_id"].tolist(), flt.texts_of(kind, df))
        df = step(kind, df, {i: f"exact_duplicate: dup of {o}" for i, o in repeats.items()})
        kept[kind] = step(kind, df, _semantic(kind, df, encoder, p.semantic, metrics))
    for kind in ("cqa", "csqa"):
        df = (
            tables[kind].sort_values(["stage", "context_id", "q_index"], kind="stable").reset_index(drop=True)
        )
        df = step(kind, df, flt.orphans(df, kept["context"]["instance_id"]))
        df = step(kind, df, flt.qa_count(df, qa[kind]))
        df = step(kind, df, flt.flag(df, [flt.not_empty("question", "answer")]))
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


def verify(
    tables: dict[str, pd.DataFrame],
    generations: pd.DataFrame,
    encoder: Encoder,
    p: VerifyParams,
    *,
    words: WordRange,
    qa_pairs: dict[str, int],
) -> VerifyResult:
    """See the module docstring; ``qa_pairs`` is the expected set size for "cqa" and "csqa"."""
    kept, rejects, metrics = _filter(tables, encoder, p, words, qa_pairs)
    all_rejects = pd.concat([flt.unparsed(generations), *rejects], ignore_index=True)
    counts: dict[str, Any] = {}
    for kind, df in kept.items():
        gone = all_rejects[all_rejects["type"] == kind]
        counts[kind] = {
            "in": len(tables[kind]),
            "kept": len(df),
            "dropped": {str(k): int(v) for k, v in gone["reason"].value_counts().sort_index().items()},
        }
    metrics = {"counts": counts, **metrics}
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
