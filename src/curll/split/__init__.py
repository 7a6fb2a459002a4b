"""Test / validation / train selection: LLM quality ratings, assignment, decontamination, records."""

from curll.split.assign import assign, tie_key
from curll.split.decontam import Contamination, contaminated, ngrams
from curll.split.records import build_records
from curll.split.units import build_units, rate, rating_schema

__all__ = [
    "Contamination",
    "assign",
    "build_records",
    "build_units",
    "contaminated",
    "ngrams",
    "rate",
    "rating_schema",
    "tie_key",
]
