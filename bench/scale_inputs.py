"""Inputs for the scale harness (bench/scale.py): a project whose generate shards hold N
synthetic instances, made without an LLM.

- Taxonomy: the authors' CSVs (stages 0-4, 1,343 indicators) when ``../shared/reference`` is
  there, else a synthetic one of the same stage sizes (bench/skill_graph_calls.py).
- Vocabulary: the Kuperman AoA norms capped at 1,000 words a stage (else the built-in list),
  through the real ``taxonomy`` and ``vocab`` stages.
- Seeds and generation rows (``SeedSchema``, ``GenerationSchema``): per context seed one
  passage (250-500 words, the paper's range) plus one CQA request (``cqa_pairs`` pairs) and one
  CSQA request (``csqa_pairs`` pairs); per IR seed one instruction/response pair. Passages open
  with their indicator's text and contain their seed word, so the content checks pass as on a
  capable model; answers quote their passage. A share ``exact`` of passages and IR pairs are
  verbatim copies of an earlier one of the same stage, a share ``near`` are copies with one
  edit (harness/corpus.py): verify must find them.

N counts instances (passages + IR pairs + QA pairs), the unit of the paper's Table 1 (about 150M).
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from curll.artifacts import read_table, write_table
from curll.generate.shard import instance_id, shard_path_name, sort_rows
from curll.instances import TYPES
from curll.llm.types import canonical_json
from curll.schemas import GenerationSchema, IndicatorSchema, SeedSchema, WordSchema
from harness.corpus import NAMES, PLACES, TIMES, _edit


@dataclass(frozen=True)
class Plan:
    n: int  #: instances wanted
    cqa_pairs: int = 5
    csqa_pairs: int = 3
    exact: float = 0.02  #: planted verbatim copies (passages and IR pairs)
    near: float = 0.03  #: planted one-edit copies
    shards: int = 4
    seed: int = 0

    @property
    def seeds_per_type(self) -> int:
        """Context seeds (= IR seeds): a context seed makes 1 + cqa + csqa instances, an IR seed 1."""
        return max(1, round(self.n / (2 + self.cqa_pairs + self.csqa_pairs)))


def _hex(text: str, n: int = 16) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


class _Writer:
    """English-like sentences over the vocabulary (by part of speech). A passage draws its
    words from a small palette of its own, as a real text keeps to its topic (drawing every
    word from the whole vocabulary makes all passages alike to a bag-of-words encoder)."""

    def __init__(self, words: pd.DataFrame, rng: random.Random) -> None:
        self.rng = rng
        self.by_pos: dict[str, list[str]] = {str(p): g["word"].tolist() for p, g in words.groupby("pos")}
        self.palette = self.by_pos

    def w(self, pos: str) -> str:
        return str(self.rng.choice(self.palette.get(pos) or self.palette["Noun"]))

    def sentence(self) -> str:
        r, w = self.rng, self.w
        forms = (
            lambda: f"{r.choice(NAMES)} saw a {w('Adjective')} {w('Noun')} in the {r.choice(PLACES)}.",
            lambda: f"{r.choice(TIMES)}, {r.choice(NAMES)} wanted to {w('Verb')} with a {w('Noun')}.",
            lambda: f"The {w('Noun')} was {w('Adverb')} {w('Adjective')}, so {r.choice(NAMES)} ran off.",
            lambda: f"Can you {w('Verb')} like a {w('Adjective')} {w('Noun')}?",
            lambda: f"{r.choice(NAMES)} found {r.randint(2, 12)} {w('Noun')}s near the {w('Noun')}.",
            lambda: f'"Let us {w("Verb")} the {w("Noun")} together," said {r.choice(NAMES)}.',
        )  # fmt: skip
        return r.choice(forms)()

    def passage(self, indicator: str, word: str, lo: int = 250, hi: int = 500) -> str:
        target = self.rng.randint(lo, hi - 40)
        parts = [f"Today {self.rng.choice(NAMES)} practised this: {indicator.rstrip('.')}."]
        parts.append(f"There was a {word} in the story.")
        count = sum(len(p.split()) for p in parts)
        self.palette = {p: self.rng.sample(ws, min(len(ws), 16)) for p, ws in self.by_pos.items()}
        while count < target:
            parts.append(self.sentence())
            count += len(parts[-1].split())
        self.palette = self.by_pos
        self.rng.shuffle(parts)
        return " ".join(parts)


def _row(task: str, seed: dict[str, Any], key: str, parent: str, output: dict[str, Any]) -> dict[str, Any]:
    text = canonical_json(output)
    return {
        "request_key": key, "model": "scale-harness", "backend": "openai", "sampling": "{}",
        "prompt_version": _hex("v"), "prompt_hash": _hex("h" + key), "raw": text, "status": "ok",
        "reason": "", "attempts": 1, "task": task, "seed_id": seed["seed_id"], "parent_id": parent,
        "indicator_id": seed["indicator_id"], "stage": seed["stage"], "output": text,
        "prompt_tokens": 200, "completion_tokens": len(text) // 4,
    }  # fmt: skip


def _qa(task: str, passage: str, k: int, rng: random.Random) -> dict[str, Any]:
    t = TYPES[task]
    list_key, (q, a) = t.pairs, t.answer
    sentences = [s for s in passage.split(". ") if len(s.split()) >= 4]
    items = []
    for i in range(k):
        quote = rng.choice(sentences).rstrip(".?!")
        ask = f"What happens in part {i + 1} of the story about {quote.split()[-1]}?"
        if task == "csqa":
            ask = f"Tell the story part {i + 1} again in your own words, using {quote.split()[0]}."
        items.append({q: ask, a: quote + "."})
    return {list_key: items}


def make_rows(
    plan: Plan, indicators: pd.DataFrame, words: pd.DataFrame
) -> tuple[pd.DataFrame, list[dict[str, Any]], dict[str, int]]:
    """The seeds table, the generation rows (all accepted) of ``plan`` and the planted copies
    by type ("context exact", "ir near", ...). A planted copy's
    seed takes its original's indicator and word (the model asked twice for the same thing)."""
    rng = random.Random(plan.seed)
    writer = _Writer(words, rng)
    ind: list[dict[str, Any]] = [
        {str(k): v for k, v in r.items()}
        for r in indicators.sample(frac=1, random_state=plan.seed).to_dict("records")
    ]  # every stage early
    by_stage = {s: g["word"].tolist() for s, g in words.groupby("stage")}
    seeds: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    pools: dict[tuple[str, int], list[tuple[dict[str, Any], str, Any]]] = {}  # earlier texts
    planted: Counter[str] = Counter()

    def pick(kind: str, r: dict[str, Any], word: str, make: Any) -> tuple[dict[str, Any], str, Any]:
        pool = pools.setdefault((kind, r["stage"]), [])
        roll = rng.random()
        if pool and roll < plan.exact + plan.near:
            r, word, made = rng.choice(pool)
            planted[f"{kind} {'exact' if roll < plan.exact else 'near'}"] += 1
            if roll >= plan.exact:  # one edit: a near duplicate
                made = (
                    _edit(rng, made, writer.by_pos)
                    if kind == "context"
                    else (made[0], _edit(rng, made[1], writer.by_pos))
                )
            return r, word, made
        made = make(r, word)
        if len(pool) < 2000:  # copies come from a bounded reservoir of earlier texts
            pool.append((r, word, made))
        else:
            pool[rng.randrange(2000)] = (r, word, made)
        return r, word, made

    def passage(r: dict[str, Any], word: str) -> str:
        return writer.passage(r["indicator"], word)

    def pair(r: dict[str, Any], word: str) -> tuple[str, str]:
        ask = f"Please help me {r['indicator'].rstrip('.').lower()} with a {word}."
        return ask, f"Sure. {writer.sentence()} {writer.sentence()} The {word} helps us learn."

    for i in range(2 * plan.seeds_per_type):
        kind = "context" if i % 2 == 0 else "ir"
        r = ind[(i // 2) % len(ind)]
        word = rng.choice(by_stage.get(r["stage"]) or words["word"].tolist())
        r, word, made = pick(kind, r, word, passage if kind == "context" else pair)
        template = f"a story, form {i % 7}" if kind == "context" else f"a question, form {i % 5}"
        seed = {
            "seed_id": _hex(f"seed {plan.seed} {i}"), "indicator_id": r["indicator_id"], "stage": r["stage"],
            "age_group": r["age_group"], "skill": r["skill"], "subskill": r["subskill"], "goal": r["goal"],
            "indicator": r["indicator"], "type": kind, "template": template, "word": word, "pos": "Noun",
        }  # fmt: skip
        seeds.append(seed)
        key = _hex(f"request {plan.seed} {i}", 64)
        if kind == "ir":
            rows.append(_row("ir", seed, key, "", {"instruction": made[0], "response": made[1]}))
            continue
        topic = {"expanded_topic": f"{word} and friends", "generated_text": made}
        rows.append(_row("context", seed, key, "", topic))
        parent = instance_id(key)
        for task, k in (("cqa", plan.cqa_pairs), ("csqa", plan.csqa_pairs)):
            rows.append(_row(task, seed, _hex(f"{task} {key}", 64), parent, _qa(task, made, k, rng)))
    seed_df = pd.DataFrame(seeds, columns=list(SeedSchema.to_schema().columns))
    return seed_df.sort_values("seed_id").reset_index(drop=True), rows, dict(sorted(planted.items()))


def write_inputs(project: Path, params: dict[str, Any], plan: Plan) -> dict[str, int]:
    """Write the seeds table and ``plan.shards`` generate shards into ``project``; returns counts."""
    indicators = read_table(project / params["taxonomy"]["out"]["indicators"], IndicatorSchema)
    words = read_table(project / params["vocab"]["out"]["words"], WordSchema)
    seeds, rows, planted = make_rows(plan, indicators, words)
    write_table(seeds, project / params["seeds"]["out"]["seeds"], SeedSchema)
    gens = pd.DataFrame(rows, columns=list(GenerationSchema.to_schema().columns))
    shard = gens["seed_id"].map(lambda s: int(s, 16) % plan.shards)
    out = project / params["generate"]["out"]["shards"]
    for i in range(plan.shards):
        write_table(sort_rows(gens[shard == i]), out / shard_path_name(i, plan.shards), GenerationSchema)
    per_task = gens["task"].value_counts().to_dict()
    pairs = per_task.get("cqa", 0) * plan.cqa_pairs + per_task.get("csqa", 0) * plan.csqa_pairs
    made = per_task.get("context", 0) + per_task.get("ir", 0) + pairs
    return {"seeds": len(seeds), "requests": len(gens), "instances": made, **planted}
