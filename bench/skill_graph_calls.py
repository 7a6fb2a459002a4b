"""LLM calls the skill graph needs per candidate strategy, at the paper's size.

The stage asks one edge request per candidate pair, then one weight request per predicted edge
(at most one per pair): first-attempt calls are at most ``2 x pairs`` (each failed answer may be
asked again up to ``llm.attempts`` times). This prints, per strategy, the pairs and that worst
case per indicator, on the authors' taxonomy (stages 0-4: 1,343 indicators) when
``../shared/reference`` is there, else on a synthetic taxonomy of that size. No model runs.

Usage: python -m bench.skill_graph_calls [--synthetic]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from curll.skill_graph.candidates import candidate_pairs
from curll.taxonomy.model import indicator_id

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference" / "curll-taxonomy"
#: the paper's stages 0-4 sizes (Table 1): indicators per stage
PAPER_STAGES = {0: 182, 1: 292, 2: 249, 3: 271, 4: 349}
SKILLS = ["Language", "Mathematics", "Science", "Social skills", "Emotional growth", "Physical health",
          "Arts", "Reasoning", "Reading", "Writing", "Listening", "Speaking", "Ethics",
          "Technology"]  # fmt: skip
VERBS = ["names", "counts", "describes", "compares", "sorts", "explains", "retells", "predicts",
         "measures", "draws", "asks about", "solves", "shares", "plans", "recognises", "uses"]  # fmt: skip
OBJECTS = ["shapes", "numbers to 20", "feelings", "plants", "animals", "coins", "simple words", "stories",
           "patterns", "the weather", "rules of a game", "sounds", "family members", "maps", "time",
           "colours", "healthy food", "friends' ideas", "short sentences", "events in order"]  # fmt: skip


def synthetic_taxonomy(sizes: dict[int, int] = PAPER_STAGES, seed: int = 0) -> pd.DataFrame:
    """An indicator table of the given stage sizes, with 14 skills, 4 sub-skills each and
    indicator texts from a small grammar (``curll.schemas.IndicatorSchema`` columns)."""
    rng = np.random.default_rng(seed)

    def pick(words: list[str]) -> str:
        return words[int(rng.integers(len(words)))]

    rows = []
    for stage, n in sizes.items():
        for i in range(n):
            skill = pick(SKILLS)
            sub = f"{skill} {int(rng.integers(4)) + 1}"
            goal = f"Builds {pick(OBJECTS)} skills"
            text = f"{pick(VERBS).capitalize()} {pick(OBJECTS)} ({i})"
            rows.append({
                "indicator_id": indicator_id(stage, skill, sub, goal, text), "stage": stage,
                "age_group": f"{stage + 5}-{stage + 6}", "skill": skill, "subskill": sub, "goal": goal,
                "indicator": text, "source": "synthetic", "source_row": i + 1,
            })  # fmt: skip
    return pd.DataFrame(rows)


def reference_taxonomy() -> pd.DataFrame | None:
    from curll.taxonomy import import_taxonomy

    files = sorted(REFERENCE.glob("*.csv"))
    return import_taxonomy("curll-csv", files, stages=range(5)).table if files else None


def calls(ind: pd.DataFrame, strategy: str, neighbours: int = 3, max_stage_gap: int = 1) -> dict[str, object]:
    """Pairs a strategy asks about and the worst-case first-attempt calls per indicator."""
    start = time.perf_counter()
    n = len(ind)
    if strategy == "all":  # 900k tuples at n = 1,343: counted, not built
        pairs = n * (n - 1) // 2
    else:
        pairs = len(candidate_pairs(ind, strategy, neighbours=neighbours, max_stage_gap=max_stage_gap))
    return {
        "strategy": strategy + (f" k={neighbours}" if strategy == "nearest" else ""),
        "indicators": n,
        "pairs": pairs,
        "max calls": 2 * pairs,
        "max calls per indicator": round(2 * pairs / n, 1),
        "candidates s": round(time.perf_counter() - start, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--synthetic", action="store_true", help="even when the reference taxonomy is there")
    args = ap.parse_args()
    ind = None if args.synthetic else reference_taxonomy()
    source = "the authors' taxonomy" if ind is not None else "a synthetic taxonomy"
    ind = ind if ind is not None else synthetic_taxonomy()
    rows = [calls(ind, "all"), calls(ind, "related")]
    rows += [calls(ind, "nearest", neighbours=k) for k in (1, 3, 5, 10)]
    print(f"{source}, stages 0-4, max_stage_gap 1")
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
