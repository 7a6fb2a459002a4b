"""Candidate indicator pairs for edge prediction (asking about all n^2/2 pairs is rarely affordable).

Each strategy returns unordered pairs ``(a_id, b_id)`` with ``a_id < b_id``, sorted, so the
same taxonomy always gives the same requests:
- ``all``: every pair (1,300 indicators: about 845k pairs);
- ``related``: pairs in the same skill;
- ``nearest``: for each indicator its ``k`` most similar others by cosine similarity of
  TF-IDF vectors of "skill / sub-skill / goal / indicator" (scikit-learn);
``related`` and ``nearest`` drop pairs whose stages differ by more than ``max_stage_gap``.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

Pair = tuple[str, str]


def _ordered(a: str, b: str) -> Pair:
    return (a, b) if a < b else (b, a)


def all_pairs(ind: pd.DataFrame) -> list[Pair]:
    return sorted(_ordered(a, b) for a, b in combinations(ind["indicator_id"].astype(str).tolist(), 2))


def related_pairs(ind: pd.DataFrame, max_stage_gap: int) -> list[Pair]:
    pairs = set()
    for _, group in ind.groupby("skill"):
        members = list(zip(group["indicator_id"].tolist(), group["stage"].tolist(), strict=True))
        for (a, sa), (b, sb) in combinations(members, 2):
            if abs(int(sa) - int(sb)) <= max_stage_gap:
                pairs.add(_ordered(str(a), str(b)))
    return sorted(pairs)


def nearest_pairs(ind: pd.DataFrame, k: int, max_stage_gap: int) -> list[Pair]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    text = ind["skill"] + " / " + ind["subskill"] + " / " + ind["goal"] + " / " + ind["indicator"]
    vec = TfidfVectorizer(sublinear_tf=True).fit_transform(text.tolist())  # rows are L2-normalised
    sim = (vec @ vec.T).toarray()  # (n, n) cosine similarity
    stages = ind["stage"].to_numpy()
    sim[np.abs(stages[:, None] - stages[None, :]) > max_stage_gap] = -np.inf
    np.fill_diagonal(sim, -np.inf)
    ids = ind["indicator_id"].tolist()
    pairs = set()
    for i in range(len(ids)):
        # stable sort: equal similarities keep table order, so the result is deterministic
        for j in np.argsort(-sim[i], kind="stable")[:k]:
            if np.isfinite(sim[i, j]):
                pairs.add(_ordered(ids[i], ids[int(j)]))
    return sorted(pairs)


def candidate_pairs(ind: pd.DataFrame, strategy: str, *, neighbours: int, max_stage_gap: int) -> list[Pair]:
    if strategy == "all":
        return all_pairs(ind)
    if strategy == "related":
        return related_pairs(ind, max_stage_gap)
    if strategy == "nearest":
        return nearest_pairs(ind, neighbours, max_stage_gap)
    raise ValueError(f"unknown candidate strategy {strategy!r}")
