"""A seeded synthetic corpus of short child-level passages with planted near-duplicates.

Sentences come from a small grammar over the built-in vocabulary plus common words; each
passage has 5-10 sentences. A share of passages are planted copies of earlier ones with one
edit (a word swapped, the sentences reordered, or punctuation and case changed: the verbatim
reuse dedup is for), so both encoders have real duplicates to find among distinct texts.
"""

from __future__ import annotations

import csv
import random
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMES = [
    "Mia", "Leo", "Sam", "Ava", "Ben", "Zoe", "Max", "Lily", "Noah", "Ella",
    "Omar", "Ivy", "Finn", "Ruby", "Jack", "Nora", "Theo", "Maya", "Eli", "Rosa",
]  # fmt: skip
PLACES = [
    "park",
    "garden",
    "kitchen",
    "school",
    "beach",
    "forest",
    "farm",
    "library",
    "river",
    "market",
    "zoo",
    "yard",
]
TIMES = [
    "In the morning",
    "After lunch",
    "On Sunday",
    "Before bed",
    "At night",
    "One rainy day",
    "Last summer",
]


def _vocab() -> dict[str, list[str]]:
    by_pos: dict[str, list[str]] = {"Noun": [], "Verb": [], "Adjective": [], "Adverb": []}
    with (ROOT / "src/curll/resources/vocab_builtin.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            by_pos[row["pos"]].append(row["word"])
    return by_pos


def _sentence(rng: random.Random, v: dict[str, list[str]]) -> str:
    def n() -> str:
        return rng.choice(v["Noun"])

    def a() -> str:
        return rng.choice(v["Adjective"])

    def vb() -> str:
        return rng.choice(v["Verb"])

    forms = [
        lambda: f"{rng.choice(NAMES)} saw a {a()} {n()} in the {rng.choice(PLACES)}.",
        lambda: f"{rng.choice(TIMES)}, {rng.choice(NAMES)} wanted to {vb()} with a {n()}.",
        lambda: f"The {n()} was very {a()}, so {rng.choice(NAMES)} began to {vb()}.",
        lambda: f"Can you {vb()} like a {a()} {n()}?",
        lambda: (
            f"{rng.choice(NAMES)} and {rng.choice(NAMES)} found {rng.randint(2, 12)} {n()}s near the {n()}."
        ),
        lambda: f'"Let us {vb()} the {n()} together," said {rng.choice(NAMES)}.',
    ]
    return rng.choice(forms)()


def _edit(rng: random.Random, text: str, v: dict[str, list[str]]) -> str:
    sentences = _split(text)
    kind = rng.randrange(3)
    if kind == 0:  # swap one content word
        words = text.split(" ")
        i = rng.randrange(len(words))
        words[i] = rng.choice(v["Noun"])
        return " ".join(words)
    if kind == 1:  # change case and punctuation
        return text.lower().replace(".", "!", 1)
    return " ".join(sentences[1:] + sentences[:1])  # move the first sentence to the end


def _split(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.?!])\s+(?=[A-Z\"])", text) if s]


def corpus(n: int, *, planted: float = 0.1, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    v = _vocab()
    texts: list[str] = []
    while len(texts) < n:
        if texts and rng.random() < planted:
            texts.append(_edit(rng, rng.choice(texts), v))
        else:
            texts.append(" ".join(_sentence(rng, v) for _ in range(rng.randint(5, 10))))
    return texts
