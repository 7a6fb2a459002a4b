"""Release layout: datasets.load_dataset reads every stage with its three splits."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from datasets import load_dataset
from huggingface_hub import DatasetCard

from curll.release import Counts, dataset_card, params_hash, write_release
from tests.instances import hx


def cache(tmp_path: Path) -> str:
    """The datasets cache of one test, under its tmp_path (not the user's ~/.cache)."""
    return str(tmp_path / "hf")


def records() -> pd.DataFrame:
    rows = []
    for stage in (0, 1):
        for i, split in enumerate(["train", "train", "validation", "test"]):
            msgs = [
                {"role": "user", "content": f"q{stage}{i}"},
                {"role": "assistant", "content": f"a{stage}{i}"},
            ]
            rows.append(
                {"record_id": hx(f"{stage}{i}"), "unit_id": hx(f"u{stage}{i}"), "stage": stage,
                 "indicator_id": hx("ind"), "skill": "S", "subskill": "SS", "indicator": "I",
                 "type": "ir" if i % 2 else "cqa", "split": split, "messages": json.dumps(msgs)}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_release_loads_with_datasets_and_card_configs(tmp_path):
    recs = records().sort_values(["stage", "split", "type", "record_id"])  # as the split stage writes them

    def card(counts: Counts) -> str:
        return dataset_card(
            "demo",
            counts,
            models=["m@1"],
            params_digest=params_hash({"a": 1}),
            params_json="{}",
            license_id="apache-2.0",
        )

    counts = write_release(
        (recs.iloc[i : i + 3] for i in range(0, len(recs), 3)), tmp_path / "rel", card=card
    )
    assert counts["stage_1/train"] == {"cqa": 1, "ir": 1}
    ds = load_dataset("parquet", data_dir=str(tmp_path / "rel" / "stage_0"), cache_dir=cache(tmp_path))
    assert {k: len(v) for k, v in ds.items()} == {"train": 2, "validation": 1, "test": 1}
    row = ds["test"][0]
    assert row["messages"][-1] == {"role": "assistant", "content": "a03"} and row["stage"] == 0
    by_card = load_dataset(str(tmp_path / "rel"), "stage_1", cache_dir=cache(tmp_path))
    assert len(by_card["train"]) == 2
    text = (tmp_path / "rel" / "README.md").read_text()
    assert "config_name: stage_1" in text and params_hash({"a": 1}) in text
    assert "| 0 | train | 1 | 1 |" in text  # cqa, ir
    flat = " ".join(text.split())  # the opening paragraph is wrapped
    assert "stages 0 to 1 (age groups 0-5 to 5-6)" in flat and "`stage`: 0 and 1;" in flat  # the records' own
    gaps = " ".join(card(Counter({(0, "train", "ir"): 1, (2, "train", "ir"): 1})).split())
    assert "stages 0 (0-5) and 2 (6-7)" in gaps and "for no stage," in " ".join(card(Counter()).split())


def test_records_out_of_stage_and_split_order_are_refused(tmp_path):
    import pytest

    from curll.errors import CurllError

    recs = records().sort_values(["stage", "split"])
    shuffled = pd.concat([recs.iloc[:2], recs.iloc[4:], recs.iloc[2:4]])  # stage 0's test comes back
    with pytest.raises(CurllError, match="not sorted by stage and split"):
        write_release([shuffled.iloc[:3], shuffled.iloc[3:]], tmp_path / "rel", card=lambda c: "")
    assert not (tmp_path / "rel").exists()


def test_params_hash_is_order_independent():
    assert params_hash({"a": 1, "b": [1, 2]}) == params_hash({"b": [1, 2], "a": 1}) != params_hash({"a": 2})


def test_every_stage_loads_as_the_readme_shows_when_a_split_is_empty(tmp_path):
    """An empty split used to be written as a zero-row parquet file, which `datasets` cannot read
    ("BatchSize must be greater than 0"): stage 0 of the default run has no validation records."""
    recs = records()
    recs = recs[~((recs["stage"] == 0) & (recs["split"] == "validation"))]
    recs = recs.sort_values(["stage", "split", "type", "record_id"])

    def card(counts):
        return dataset_card("demo", counts, models=["m@1"], params_digest="0" * 16, params_json="{}",
                            license_id="apache-2.0")  # fmt: skip

    counts = write_release([recs], tmp_path / "rel", card=card)
    assert "stage_0/validation" not in counts and counts["stage_1/validation"] == {"cqa": 1}
    for stage in (0, 1):
        by_dir = load_dataset(
            "parquet", data_dir=str(tmp_path / "rel" / f"stage_{stage}"), cache_dir=cache(tmp_path)
        )
        by_card = load_dataset(str(tmp_path / "rel"), f"stage_{stage}", cache_dir=cache(tmp_path))
        want = {"train": 2, "test": 1} | ({"validation": 1} if stage else {})
        assert {k: len(v) for k, v in by_dir.items()} == want == {k: len(v) for k, v in by_card.items()}


@pytest.mark.parametrize("name", ["CurLL: a slice", "# first", "yes", "2024", "[draft]", "it's *new*"])
def test_the_card_header_holds_any_one_line_name_as_text(tmp_path, name):
    """The name went into the YAML header bare: "CurLL: a slice" made a card that neither
    ``load_dataset(folder, config)`` nor the Hub could read, and "yes" read back as a boolean."""
    recs = records().sort_values(["stage", "split", "type", "record_id"])

    def card(counts: Counts) -> str:
        return dataset_card(name, counts, models=["m@1"], params_digest="0" * 16, params_json="{}",
                            license_id="cc-by-4.0")  # fmt: skip

    write_release([recs], tmp_path / "rel", card=card)
    text = (tmp_path / "rel" / "README.md").read_text(encoding="utf-8")
    header = DatasetCard(text).data  # the Hub's own reading of a card's metadata
    assert header.get("pretty_name") == name and header.get("license") == "cc-by-4.0"
    ds = load_dataset(str(tmp_path / "rel"), "stage_0", cache_dir=cache(tmp_path))
    assert len(ds["train"]) == 2
