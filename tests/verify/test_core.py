"""verify(): every filter drops with its reason, kept tables keep their schema, metrics add up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from curll.artifacts import validate
from curll.config import load_params
from curll.config.verify import ContentChecks, WordRange
from curll.schemas import GenerationSchema, RejectSchema, instance_schema
from curll.verify.core import plot_tables
from curll.verify.screen import Settings
from harness.verify import VerifyResult, verify
from tests import instances as inst
from tests.verify.conftest import PASSAGES

COPY = PASSAGES[0].replace("small brown puppy", "little brown puppy")


def planted() -> tuple[dict[str, pd.DataFrame], pd.DataFrame, Settings]:
    """Tables with one row planted for each filter, the generations (4 unparsed requests), settings."""
    ctx = inst.contexts(
        [
            ("c0", 0, "i0", PASSAGES[0]),
            ("c1", 0, "i0", COPY),  # near-duplicate of c0 (same stage)
            ("c2", 0, "i1", PASSAGES[1].upper()),  # c4 repeats it (stage 0 comes first: c2 is kept)
            ("c3", 1, "i2", "Too short."),  # outside the word range
            ("c4", 1, "i2", PASSAGES[1]),
            ("c5", 1, "i3", PASSAGES[2]),
            ("c6", 1, "i3", "   "),  # empty
        ]
    )
    ir = inst.ir(
        [
            ("r0", 0, "i0", "Tell me about puppies.", PASSAGES[0]),
            ("r1", 0, "i0", "tell me about puppies", PASSAGES[0].lower()),  # exact duplicate of r0
            ("r2", 1, "i2", "", "An answer."),  # empty instruction
            ("r3", 1, "i2", "Count the coins.", PASSAGES[2]),
        ]
    )
    two = [("Q1?", "A1."), ("Q2?", "A2.")]
    cqa = inst.qa("cqa", ctx, {"c0": two, "c1": two, "c4": [("Q?", "A.")], "c5": [*two[:1], ("Q1?", "A1.")]})
    csqa = inst.qa("csqa", ctx, {"c0": [("Do it.", "Done.")], "c5": [("Do it.", " ")]})
    gens = pd.DataFrame(columns=list(GenerationSchema.to_schema().columns)).astype(
        {"stage": "int64", "attempts": "int64", "prompt_tokens": "int64", "completion_tokens": "int64"}
    )
    bad = {**inst._prov("bad", 0, "i0"), "task": "ir", "parent_id": "", "output": "", "status": "reject",
           "reason": "schema: missing response", "prompt_tokens": 1, "completion_tokens": 1}  # fmt: skip
    # one unparsed request of every type: a QA request counts as the pairs it should have made
    where = {"stage": 1, "indicator_id": inst.hx("i2")}
    more = [
        {**bad, **where, "request_key": inst.hx(f"bad-{t}", 64), "task": t}
        for t in ("context", "cqa", "csqa")
    ]
    gens = pd.concat([gens, pd.DataFrame([bad, *more])[gens.columns]], ignore_index=True)
    p = load_params().verify.model_copy(update={"min_yield": 0.0})  # tiny tables: yields are not the point
    tables = {"context": ctx, "ir": ir, "cqa": cqa, "csqa": csqa}
    off = ContentChecks(seed_word=False, grounded=0, on_topic=0, ngram=3, max_repeated=1.0)
    topics = {inst.hx(i): f"indicator {i}" for i in ("i0", "i1", "i2", "i3")}
    settings = Settings(p, words=WordRange(min=10, max=500), qa_pairs={"cqa": 2, "csqa": 1}, checks=off,
                        topics=topics)  # fmt: skip
    return tables, gens, settings


@pytest.fixture(scope="module")
def result(encoder):
    tables, gens, settings = planted()
    return verify(tables, gens, encoder, settings)


def reasons(result: VerifyResult, kind: str) -> dict[str, str]:
    rej = result.rejects[result.rejects["type"] == kind]
    return dict(zip(rej["id"], rej["reason"], strict=True))


def test_each_filter_drops_with_its_reason(result):
    assert reasons(result, "context") == {
        inst.hx("c1"): "near_duplicate", inst.hx("c4"): "exact_duplicate",
        inst.hx("c3"): "words", inst.hx("c6"): "empty", inst.hx("bad-context", 64)[:16]: "unparsed",
    }  # fmt: skip
    ir = reasons(result, "ir")
    assert ir[inst.hx("bad")] == "unparsed" and ir[inst.hx("r2")] == "empty"
    # r0 / r1 repeat each other: the first in table order is kept
    assert len(ir) == 3 and ir[inst.hx("r1")] == "exact_duplicate"
    kept = set(result.kept["context"]["instance_id"])
    assert kept == {inst.hx("c0"), inst.hx("c2"), inst.hx("c5")}
    rej = result.rejects.set_index("id")["detail"]  # the evidence, as each check wrote it
    assert rej[inst.hx("c3")] == "2 not in [10, 500]" and rej[inst.hx("c6")] == "text"
    assert rej[inst.hx("c4")] == f"dup of {inst.hx('c2')}" and rej[inst.hx("r2")] == "instruction"
    assert rej[inst.hx("c1")].startswith(f"dup of {inst.hx('c0')} (0.9")
    assert rej[inst.hx("bad")] == "schema: missing response"  # the request's own reason, whole


def test_qa_pairs_follow_their_passage_and_sets_are_checked(result):
    cqa = reasons(result, "cqa")
    # c1's pairs lose their passage; c4 (dropped) too; c5 has the right count but a repeated pair
    assert sorted(cqa.values()) == ["context_dropped"] * 3 + ["exact_duplicate", "unparsed"]
    assert set(result.kept["cqa"]["context_id"]) == {inst.hx("c0"), inst.hx("c5")}
    csqa = reasons(result, "csqa")
    assert sorted(csqa.values()) == ["empty", "unparsed"]


def test_outputs_validate_and_counts_add_up(result):
    validate(result.rejects, RejectSchema, source="rejects")
    for kind, df in result.kept.items():
        validate(df, instance_schema(kind), source=kind)
        c = result.metrics["counts"][kind]
        assert c["kept"] == len(df)
    counts = result.metrics["counts"]
    assert set(counts) == {"context", "ir", "cqa", "csqa"}
    for kind, c in counts.items():  # every type adds up
        assert c["in"] == c["kept"] + sum(c["dropped"].values()), kind
    # in: instances + the unparsed request in the type's unit (qa_pairs cqa 2, csqa 1)
    assert [counts[k]["in"] for k in ("context", "ir", "cqa", "csqa")] == [7 + 1, 4 + 1, 7 + 2, 2 + 1]
    assert [counts[k]["dropped"]["unparsed"] for k in ("context", "ir", "cqa", "csqa")] == [1, 1, 2, 1]


def test_metrics_cover_stages_types_and_pairs(result):
    m = result.metrics
    assert m["dedup"]["context"] == {"0": round(1 / 3, 6), "1": 0.0}  # c1 of {c0, c1, c2}; then c5 alone
    assert set(m["dedup_pairs"]["context"]) == {"0-1"}
    assert set(m["diversity"]) == {"context", "ir", "cqa", "csqa"}
    fk = m["readability"]["context"]["0"]["flesch_kincaid"]
    assert fk["mean"] > 0 and fk["std"] >= 0
    plots = plot_tables(m)
    assert list(plots["readability"].columns) == ["stage", "context", "ir", "cqa", "csqa"]
    assert plots["dedup"]["context"].tolist() == [round(1 / 3, 6), 0.0]


def test_an_instance_of_an_indicator_the_taxonomy_lacks_is_named_by_file_and_row(encoder):
    from curll.errors import CurllError

    tables, gens, settings = planted()
    tables["ir"].loc[2, "indicator_id"] = inst.hx("not-in-the-taxonomy")
    with pytest.raises(CurllError) as err:
        verify(tables, gens, encoder, settings)
    assert (Path(str(err.value.file)).name, err.value.row, err.value.field) == (
        "in-ir.parquet",
        2,
        "indicator_id",
    )
    assert "not in the taxonomy" in err.value.message


def test_keeping_nothing_fails_whatever_min_yield_allows(encoder):
    from curll.yields import YieldError

    tables, gens, settings = planted()
    empty = {k: df.iloc[:0] for k, df in tables.items()}
    with pytest.raises(YieldError, match="hold no instance"):
        verify(empty, gens.iloc[:0], encoder, settings)
    tiny = {k: df.iloc[:0] for k, df in tables.items()} | {
        "ir": tables["ir"].iloc[2:3]
    }  # an empty instruction
    with pytest.raises(YieldError, match=r"kept none of the 1 instances read \(empty 1\)"):
        verify(tiny, gens.iloc[:0], encoder, settings)


def test_the_metrics_and_plots_are_written_with_the_tables_or_not_at_all(encoder, tmp_path):
    """A side file that cannot be written (its folder is a file) leaves every table as it was."""
    from curll.errors import CurllError
    from curll.instances import TYPES
    from curll.verify.core import verify_files

    tables, gens, settings = planted()
    inputs = {k: tmp_path / f"in-{k}.parquet" for k in TYPES}
    outputs = {k: tmp_path / f"out-{k}.parquet" for k in TYPES}
    for k in TYPES:
        tables[k].to_parquet(inputs[k], index=False)
    gens.to_parquet(tmp_path / "gens.parquet", index=False)

    def run(side: Path) -> dict[str, Any]:
        return verify_files(inputs, tmp_path / "gens.parquet", outputs, tmp_path / "rejects.parquet", encoder,
                            settings, texts=lambda m: {side / "metrics.json": str(sorted(m))})  # fmt: skip

    run(tmp_path / "side")
    before = {p.name: p.read_bytes() for p in tmp_path.glob("out-*.parquet")}
    assert (tmp_path / "side" / "metrics.json").read_text().startswith("[")
    (tmp_path / "blocked").write_text("a file where the side folder should be")
    tables["ir"] = tables["ir"].iloc[:2]  # another input: the tables would change
    tables["ir"].to_parquet(inputs["ir"], index=False)
    with pytest.raises(CurllError, match="blocked"):
        run(tmp_path / "blocked")
    assert {p.name: p.read_bytes() for p in tmp_path.glob("out-*.parquet")} == before
