"""Pandera schemas: one per artifact, the contract at every stage boundary.

Columns are listed with their meaning in each schema's docstring; ``strict = True``
rejects unknown columns so a stage cannot silently pass along data nobody declared.
"""

from curll.schemas.data import MAX_STAGE, POS_TAGS, IndicatorSchema, WordSchema, known_indicators
from curll.schemas.generation import (
    GenerationSchema,
    SeedSchema,
    TemplateSchema,
    instance_schema,
)
from curll.schemas.graph import EdgeSchema
from curll.schemas.quality import SPLITS, RatingSchema, RecordSchema, RejectSchema, UnitSchema

__all__ = [
    "MAX_STAGE",
    "POS_TAGS",
    "SPLITS",
    "EdgeSchema",
    "GenerationSchema",
    "IndicatorSchema",
    "RatingSchema",
    "RecordSchema",
    "RejectSchema",
    "SeedSchema",
    "TemplateSchema",
    "UnitSchema",
    "WordSchema",
    "instance_schema",
    "known_indicators",
]
