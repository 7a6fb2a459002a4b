"""Training data in bounded memory: documents on disk, rows made on demand, records streamed.

The packed rows must equal those of the in-memory packing it replaced (kept below as the
reference), for any order, with cut and dropped documents.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest

from curll.artifacts import read_table, write_table
from curll.errors import CurllError
from curll.schemas import RecordSchema
from curll.train.data import IGNORE, Doc, best_fit, fit, pack
from curll.train.records import RecordFile
from curll.train.store import DocStore
from tests.instances import hx


def dense_pack(
    docs: Sequence[Doc], context: int, pad_id: int, cut_ids: Sequence[int]
) -> dict[str, np.ndarray]:
    """The packing as it was: every row in four dense arrays, built at once."""
    kept = [d for d in (fit(d, context, cut_ids) for d in docs) if d is not None]
    rows = best_fit([len(d.tokens) - 1 for d in kept], context)
    out = {
        "input_ids": np.full((len(rows), context), pad_id),
        "labels": np.full((len(rows), context), IGNORE),
        "position_ids": np.zeros((len(rows), context), dtype=np.int64),
        "doc_ids": np.full((len(rows), context), -1),
    }
    for r, members in enumerate(rows):
        at = 0
        for i in members:
            d = kept[i]
            n = len(d.tokens) - 1
            out["input_ids"][r, at : at + n] = d.tokens[:-1]
            out["labels"][r, at : at + n] = [
                t if m else IGNORE for t, m in zip(d.tokens[1:], d.trained[1:], strict=True)
            ]
            out["position_ids"][r, at : at + n] = np.arange(n)
            out["doc_ids"][r, at : at + n] = i
            at += n
    return out


def random_docs(n: int, seed: int = 0) -> list[Doc]:
    rng = np.random.default_rng(seed)
    docs = []
    for _ in range(n):
        length = int(rng.integers(2, 60))
        tokens = rng.integers(5, 300, size=length).tolist()
        trained = (rng.random(length) < 0.4).tolist()
        passage = (1, 1 + length // 2) if rng.random() < 0.5 and length > 4 else None
        docs.append(Doc(tokens, trained, passage))
    return docs


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rows_made_on_demand_equal_the_dense_packing_in_any_order(seed):
    docs = random_docs(80, seed)
    order = np.random.default_rng(seed).permutation(len(docs))
    packed = pack(docs, 32, pad_id=1, cut_ids=[3, 4], order=order)
    reference = dense_pack([docs[i] for i in order], 32, 1, [3, 4])
    assert packed.dropped > 0 and packed.truncated > 0  # both paths are exercised
    for name, expected in reference.items():
        np.testing.assert_array_equal(getattr(packed, name), expected, err_msg=name)
    picked = [3, 0, packed.rows - 1]
    batch = packed.batch(picked)
    np.testing.assert_array_equal(batch["labels"], reference["labels"][picked])
    assert packed.loss_tokens(picked) == int((reference["labels"][picked] != IGNORE).sum())
    assert packed.stats()["tokens"] == int((reference["doc_ids"] >= 0).sum())


def test_packing_holds_less_than_a_byte_per_token_in_memory():
    """The dense packing held 32 bytes per slot (four int64 arrays): 64 MB here."""
    docs = (Doc(list(range(800)), [True] * 800) for _ in range(2500))  # 2M tokens, made lazily
    tracemalloc.start()
    packed = pack(docs, 1024, pad_id=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert packed.stats()["tokens"] == 2500 * 799
    assert peak < 2500 * 800, f"{peak / 1e6:.1f} MB traced for 2M tokens"


def test_the_store_reads_back_what_it_was_given():
    store = DocStore()
    a = store.append([7, 8, 9], [False, True, True])
    b = store.append([2**20, 5], [True, False])
    ids, flags = store.read(b)
    assert ids.tolist() == [2**20, 5] and flags.tolist() == [True, False]
    assert store.read(a)[0].tolist() == [7, 8, 9] and store.trained_targets.tolist() == [2, 0]
    with pytest.raises(RuntimeError, match="after the first read"):
        store.append([1], [True])
    store.close()


def records(n: int) -> pd.DataFrame:
    rows = [{"record_id": hx(f"r{i}"), "unit_id": hx(f"u{i}"), "stage": i % 3, "indicator_id": hx("ind"),
             "skill": "s", "subskill": "s", "indicator": "i", "type": "ir",
             "split": "validation" if i % 4 == 0 else "train",
             "messages": json.dumps([{"role": "user", "content": f"text {i}"}])}
            for i in range(n)]  # fmt: skip
    return pd.DataFrame(rows)


def test_a_record_file_streams_one_splits_messages_across_batches(tmp_path):
    frame = records(50)
    write_table(frame, tmp_path / "r.parquet", RecordSchema)
    source = RecordFile(tmp_path / "r.parquet", "train", batch_rows=7)
    train = frame[frame["split"] == "train"]
    assert source.meta["record_id"].tolist() == sorted(train["record_id"])
    wanted = np.sort(source.meta["position"].to_numpy())[::3]
    assert list(source.messages(wanted)) == frame["messages"].iloc[wanted].tolist()
    assert list(source.messages(np.array([], dtype=np.int64))) == []
    other = frame.copy()
    other.loc[1, "messages"] = json.dumps([{"role": "user", "content": "changed"}])
    write_table(other, tmp_path / "o.parquet", RecordSchema)
    assert RecordFile(tmp_path / "o.parquet", "train").digest() != source.digest()


def test_columns_read_alone_are_still_validated_naming_row_and_field(tmp_path):
    frame = records(5)
    frame.loc[3, "stage"] = -1
    frame.to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(CurllError) as err:
        read_table(tmp_path / "bad.parquet", RecordSchema, columns=["record_id", "stage"])
    assert err.value.row == 3 and err.value.field == "stage" and "bad.parquet" in str(err.value)


def test_a_record_file_gives_each_records_passage_length_from_its_units_passage_record(tmp_path):
    from curll.chat import user_turn

    passage = "Cats purr.\n\nCats sleep."
    base = {"indicator_id": hx("ind"), "skill": "s", "subskill": "s", "indicator": "i", "split": "train",
            "stage": 0}  # fmt: skip

    def chat(user: str, answer: str) -> str:
        return json.dumps([{"role": "user", "content": user}, {"role": "assistant", "content": answer}])

    rows = [
        ("p", "u", "context", chat("Write.", passage)),
        ("q", "u", "cqa", chat(user_turn("cqa", "Why?\n\nSay.", passage), "So.")),
        ("o", "v", "cqa", chat("No passage here.", "So.")),
        ("i", "w", "ir", chat("Tell me.", "So.")),
    ]
    frame = pd.DataFrame([{**base, "record_id": hx(r), "unit_id": hx(u), "type": t, "messages": m}
                          for r, u, t, m in rows])  # fmt: skip
    write_table(frame, tmp_path / "r.parquet", RecordSchema)
    source = RecordFile(tmp_path / "r.parquet", "train", batch_rows=2)
    assert source.passage_chars(np.array([0, 1, 3])) == [0, len(passage), 0]
    unit_v = rf"record {hx('o')} \(cqa\): its unit {hx('v')} has no passage record"  # not split's file
    with pytest.raises(CurllError, match=unit_v):
        source.passage_chars(np.arange(4))
