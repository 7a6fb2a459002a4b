"""Verification of generated data: filters with reasons, dedup, diversity, readability."""

from curll.verify.core import VerifyResult, plot_tables, verify
from curll.verify.dedup import Duplicate, cross_rate, exact_duplicates, near_duplicates, normalise
from curll.verify.diversity import diversity
from curll.verify.encoder import Encoder, distill_encoder, load_encoder, resolve_source
from curll.verify.readability import METRICS, score, summarise

__all__ = [
    "METRICS",
    "Duplicate",
    "Encoder",
    "VerifyResult",
    "cross_rate",
    "distill_encoder",
    "diversity",
    "exact_duplicates",
    "load_encoder",
    "near_duplicates",
    "normalise",
    "plot_tables",
    "resolve_source",
    "score",
    "summarise",
    "verify",
]
