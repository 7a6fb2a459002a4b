"""Generation shards and merge: partition, QA only on accepted passages, rejects kept, merge checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from curll.artifacts import write_table
from curll.config import load_params
from curll.errors import CurllError
from curll.generate.merge import merged, split_instances
from curll.generate.shard import generate_shard, shard_of, shard_path_name, stale_shards
from curll.generate.tasks import task_schema
from curll.llm.tasks import Task
from curll.prompts import load_prompt
from curll.sampling import Sampling
from curll.schemas import GenerationSchema, instance_schema
from tests.fakes import engine

ROOT = Path(__file__).resolve().parents[2]
PAIRS = {"cqa": 2, "csqa": 1}


def read_shards(shard_dir: Path, n: int) -> pd.DataFrame:
    """Every generation of the ``n`` shards in merge order, in one table (small tables only)."""
    parts = list(merged(shard_dir, n))
    return pd.concat(parts) if parts else pd.DataFrame(columns=list(GenerationSchema.to_schema().columns))


def seeds(n: int = 12) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "seed_id": [f"{i * 7919:016x}" for i in range(1, n + 1)],
            "indicator_id": ["a" * 16] * n,
            "stage": [i % 3 for i in range(n)],
            "age_group": ["0-5"] * n,
            "skill": ["s"] * n,
            "subskill": ["u"] * n,
            "goal": ["g"] * n,
            "indicator": ["ind"] * n,
            "type": ["context", "ir"] * (n // 2),
            "template": ["a tale"] * n,
            "word": [f"cat{i * 7919:x}" for i in range(1, n + 1)],  # names the seed in its prompt
            "pos": ["Noun"] * n,
        }
    )


def tasks() -> dict[str, Task]:
    caps = load_params(ROOT / "params.yaml").llm.profiles["embedded"].max_chars
    p = {"context": "context.j2", "ir": "ir.j2", "cqa": "cqa.j2", "csqa": "csqa.j2"}
    return {
        k: Task(load_prompt(ROOT / "prompts" / f), task_schema(k, caps, n_pairs=PAIRS.get(k, 0)), Sampling())
        for k, f in p.items()
    }


def answer(req: Any) -> dict[str, Any]:
    """Passages of seeds whose id is a multiple of 3 are blank; everything else is fine."""
    user = req.messages[1].content
    if "Passage:" in user:
        if "Skill to practise" in user:
            return {"skill_based_pairs": [{"instruction": "Do it.", "response": "Done."}]}
        return {"question_answer_pairs": [{"question": "Who?", "answer": "A cat."}] * 2}
    if "Kind of exercise" in user:
        return {"instruction": "Say hi.", "response": "Hi."}
    number = user.split('the word "cat')[1].split('"')[0]
    seed = f"{int(number, 16):016x}"
    if int(seed, 16) % 3 == 0:
        return {"expanded_topic": "cats", "generated_text": "   "}  # schema-valid, semantically empty
    return {"expanded_topic": "cats", "generated_text": f"A story for {seed}."}


def test_shards_partition_the_seeds():
    ids = seeds(50)["seed_id"]
    parts = [{s for s in ids if shard_of(s, 3) == i} for i in range(3)]
    assert set().union(*parts) == set(ids) and sum(map(len, parts)) == 50


def test_shard_asks_qa_only_for_accepted_passages_and_keeps_rejects():
    eng, backend = engine(answer)
    df = generate_shard(seeds(), eng, tasks(), shard=0, n=1, pairs=PAIRS)
    GenerationSchema.validate(df)
    ctx = df[df["task"] == "context"]
    bad = ctx[ctx["status"] == "reject"]
    assert len(bad) > 0 and (bad["reason"] == "empty generated_text").all() and (bad["output"] == "").all()
    ok_ids = set(ctx.loc[ctx["status"] == "ok", "seed_id"])
    for qa in ("cqa", "csqa"):
        assert set(df.loc[df["task"] == qa, "seed_id"]) == ok_ids
    # 12 first attempts; each blank passage asked once more (attempts=2); a CQA and a CSQA per passage
    assert len(backend.asked) == 12 + len(bad) + 2 * len(ok_ids)
    assert (bad["attempts"] == 2).all()
    assert df["sampling"].str.contains('"temperature":0.3').all()


def test_merge_splits_instances_and_checks_shards(tmp_path):
    eng, _ = engine(answer)
    s = seeds()
    for i in range(2):
        df = generate_shard(s, eng, tasks(), shard=i, n=2, pairs=PAIRS)
        write_table(df, tmp_path / shard_path_name(i, 2), GenerationSchema)
    gens = read_shards(tmp_path, 2)
    tables = split_instances(gens, s)
    instance_schema("context").validate(tables["context"])
    instance_schema("cqa").validate(tables["cqa"])
    assert len(tables["cqa"]) == 2 * len(tables["context"]) and len(tables["csqa"]) == len(tables["context"])
    assert set(tables["cqa"]["context_id"]) == set(tables["context"]["instance_id"])
    assert len(tables["ir"]) == 6
    with pytest.raises(CurllError, match="1 of 3 shards missing"):
        write_table(df, tmp_path / shard_path_name(0, 3), GenerationSchema)
        write_table(df, tmp_path / shard_path_name(1, 3), GenerationSchema)
        read_shards(tmp_path, 3)
    write_table(df, tmp_path / shard_path_name(2, 3), GenerationSchema)
    with pytest.raises(CurllError, match="appears twice in the shards"):
        read_shards(tmp_path, 3)


def _two_shards(tmp_path: Path) -> list[pd.DataFrame]:
    eng, _ = engine(answer)
    return [generate_shard(seeds(), eng, tasks(), shard=i, n=2, pairs=PAIRS) for i in range(2)]


@pytest.mark.parametrize(
    ("column", "said"),
    [("prompt_version", r"ir prompt version \w+ in generations-0000-of-0002.parquet but \w+ in "),
     ("model", r"model \S+ in generations-0000-of-0002.parquet but \S+ in generations-0001-of-0002.parquet")],
)  # fmt: skip
def test_shards_of_two_runs_are_refused_naming_one_of_each(tmp_path, column, said):
    """A shard made again after the IR prompt (or the model) changed would mix two datasets."""
    from curll.generate.shard import sort_rows

    first, second = _two_shards(tmp_path)  # shard 0 holds the IR requests
    again = first.iloc[:1].assign(request_key="f" * 64)  # one IR request made again, into shard 1
    again[column] = "0123456789abcdef" if column == "prompt_version" else "another-model@x"
    second = sort_rows(pd.concat([second, again], ignore_index=True))
    for i, df in enumerate((first, second)):
        write_table(df, tmp_path / shard_path_name(i, 2), GenerationSchema)
    with pytest.raises(CurllError, match=f"not of one run: {said}"):
        read_shards(tmp_path, 2)


def test_questions_whose_passage_no_shard_holds_are_refused(tmp_path):
    from curll.generate.merge import Parents

    first, second = _two_shards(tmp_path)
    tables = split_instances(pd.concat([first, second], ignore_index=True), seeds())
    questions = {k: df if k in ("cqa", "csqa") else df.iloc[:0] for k, df in tables.items()}
    passages = {k: df if k not in ("cqa", "csqa") else df.iloc[:0] for k, df in tables.items()}
    whole = Parents(tmp_path)
    for chunk in (questions, passages):  # the questions first: the order of chunks does not matter
        whole.add(chunk)
    whole.check()
    gone = tables["context"]["instance_id"].iloc[0]
    short = Parents(tmp_path)
    short.add({**tables, "context": tables["context"].iloc[1:]})
    with pytest.raises(
        CurllError, match=f"cqa instance \\w+ is made on passage {gone}, which no shard holds"
    ):
        short.check()


def test_two_identical_passages_make_questions_of_their_own(tmp_path):
    """Identical passages ask one identical CQA request: each passage's questions still get a
    request_key of their own, so merge finds no request twice."""

    def same_story(req):
        out = answer(req)
        return {"expanded_topic": "cats", "generated_text": "One story."} if "generated_text" in out else out

    eng, backend = engine(same_story)
    s = seeds(4)  # two context seeds, two IR seeds
    df = generate_shard(s, eng, tasks(), shard=0, n=1, pairs=PAIRS)
    write_table(df, tmp_path / shard_path_name(0, 1), GenerationSchema)
    tables = split_instances(read_shards(tmp_path, 1), s)
    assert len(tables["context"]) == 2 and tables["context"]["text"].nunique() == 1
    assert len(tables["cqa"]) == 4 and tables["cqa"]["instance_id"].is_unique
    assert tables["cqa"].groupby("context_id").size().tolist() == [2, 2]
    assert sum("Passage:" in r.messages[1].content for r in backend.asked) == 2  # one CQA, one CSQA request


def test_an_empty_seeds_table_is_named_as_empty(tmp_path, monkeypatch):
    from curll.artifacts import empty_table
    from curll.schemas import SeedSchema
    from pipeline import generate as stage

    params = load_params(ROOT / "params.yaml")
    monkeypatch.chdir(tmp_path)
    write_table(empty_table(SeedSchema), params.seeds.out.seeds, SeedSchema)
    with pytest.raises(CurllError, match="no seeds \\(an empty table\\): nothing to generate") as err:
        stage.run(params)
    assert str(err.value).startswith(params.seeds.out.seeds)


def test_a_shard_with_no_seed_of_its_own_is_an_empty_table_not_a_crash():
    eng, backend = engine(answer)
    s = seeds(2)
    empty = next(i for i in range(8) if all(shard_of(x, 8) != i for x in s["seed_id"]))
    df = generate_shard(s, eng, tasks(), shard=empty, n=8, pairs=PAIRS)
    assert df.empty and list(df.columns) == list(GenerationSchema.to_schema().columns)
    assert backend.asked == []


def test_a_shard_reads_only_its_seeds_in_table_order(tmp_path):
    from curll.generate.shard import shard_seeds
    from curll.schemas import SeedSchema

    path = tmp_path / "seeds.parquet"
    all_seeds = seeds(5000)  # more than one 4,096-row batch
    write_table(all_seeds, path, SeedSchema)
    for i in range(3):
        mine = all_seeds[[shard_of(s, 3) == i for s in all_seeds["seed_id"]]].reset_index(drop=True)
        pd.testing.assert_frame_equal(shard_seeds(path, i, 3), mine)
    pd.concat([all_seeds, all_seeds.iloc[[4500]]]).to_parquet(path, index=False)  # a seed twice
    with pytest.raises(CurllError, match=r"seed_id \S+ appears more than once") as err:
        shard_seeds(path, 0, 3)
    assert err.value.row == 5000


def test_stale_shards_are_those_of_another_shard_count(tmp_path):
    names = [shard_path_name(i, 2) for i in range(2)] + [shard_path_name(i, 3) for i in range(3)]
    for name in [*names, "notes.parquet"]:
        (tmp_path / name).touch()
    assert [p.name for p in stale_shards(tmp_path, 2)] == [shard_path_name(i, 3) for i in range(3)]
    assert [p.name for p in stale_shards(tmp_path, 3)] == [shard_path_name(i, 2) for i in range(2)]
