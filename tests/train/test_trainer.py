"""Trainer: exact resume after a crash, the three orders, continual chaining, schedules."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

from curll.artifacts import write_table
from curll.config import load_params
from curll.llm.bpe import train_bpe
from curll.model.config import preset
from curll.model.hf import load_hf
from curll.model.llama import CausalLM
from curll.schemas import RecordSchema
from curll.train.data import encode, pack
from curll.train.orders import plan, saved_models
from curll.train.records import RecordFile
from curll.train.runs import run_order
from curll.train.trainer import Settings, lr_at, train
from tests.instances import hx

P = load_params().train.model_copy(update={"seeds": (42,)})


@pytest.fixture(scope="module")
def tok():
    return train_bpe([f"Question {i}? The answer is {i * 7}. Cats and dogs play." for i in range(50)], 320)


def records(n_per_stage: int = 6, stages: tuple[int, ...] = (0, 1, 2)):
    import pandas as pd

    rows = []
    for s in stages:
        for i in range(n_per_stage):
            msgs = [{"role": "user", "content": f"Question {i + 10 * s}?"},
                    {"role": "assistant", "content": f"The answer is {(i + 10 * s) * 7}."}]  # fmt: skip
            rows.append({"record_id": hx(f"{s}-{i}"), "unit_id": hx(f"{s}-{i}"), "stage": s,
                         "indicator_id": hx(f"ind{s}"), "skill": "Maths", "subskill": "Counting",
                         "indicator": "Counts objects", "type": "ir", "split": "train",
                         "messages": json.dumps(msgs)})  # fmt: skip
    return pd.DataFrame(rows)


def on_disk(df, tmp_path, name: str = "records.parquet") -> RecordFile:
    """``df`` (RecordSchema rows) as a records file, read back as its train split."""
    write_table(df, tmp_path / name, RecordSchema)
    return RecordFile(tmp_path / name, "train")


def settings(**kw: Any) -> Settings:
    base = {
        "batch": 4,
        "micro_batch": 2,
        "epochs": 2,
        "seed": 1,
        "checkpoint_every": 1,
        "log_every": 1,
        "optim": P.optim,
    }
    return Settings(**{**base, **kw})


def fresh(tok: Any) -> CausalLM:
    torch.manual_seed(0)
    return CausalLM(preset("tiny", vocab_size=len(tok)))


class CrashError(Exception):
    pass


def test_resume_after_a_crash_gives_the_same_weights(tok, tmp_path):
    data = pack(encode(records()["messages"].tolist(), tok, loss="assistant"), 48, pad_id=tok.pad_token_id)
    ref = fresh(tok)
    out = train(ref, data, settings(), ckpt=tmp_path / "ref.pt")
    assert out.steps >= 4 and out.log[-1]["step"] == out.steps

    def crash(step: int) -> None:
        if step == 3:
            raise CrashError

    model = fresh(tok)
    with pytest.raises(CrashError):
        train(model, data, settings(), ckpt=tmp_path / "run.pt", on_step=crash)
    assert torch.load(tmp_path / "run.pt", weights_only=True)["step"] == 3
    resumed = fresh(tok)  # a new process would start from scratch weights: the checkpoint wins
    again = train(resumed, data, settings(), ckpt=tmp_path / "run.pt")
    assert [r["step"] for r in again.log] == list(range(1, out.steps + 1))  # the log survives too
    assert [r["loss"] for r in again.log] == [r["loss"] for r in out.log] and again.tokens == out.tokens
    for (name, a), b in zip(ref.state_dict().items(), resumed.state_dict().values(), strict=True):
        assert torch.equal(a, b), name


def test_plans_name_every_model_of_each_order():
    assert [r.name for r in plan("independent", (0, 1, 2), seed=7)] == [
        "seed-7/independent/0",
        "seed-7/independent/1",
        "seed-7/independent/2",
    ]
    joint = plan("joint", (0, 1, 2), seed=7)
    assert [r.data_stages for r in joint] == [(0,), (0, 1), (0, 1, 2)] and all(
        r.init_from is None for r in joint
    )
    cont = plan("continual", (0, 1, 2), seed=7, replay=0.5)
    assert [r.init_from for r in cont] == [None, "seed-7/continual/0", "seed-7/continual/0-1"]
    assert [r.data_stages for r in cont] == [(0,), (1,), (2,)] and cont[2].replay_stages == (0, 1)


def test_continual_starts_from_the_previous_weights(tok, tmp_path, monkeypatch):
    import curll.train.runs as runs

    seen: dict[str, torch.Tensor] = {}
    real = runs.train  # type: ignore[attr-defined]

    def spy(model, data, s, **kw):
        seen[kw["desc"]] = model.model.norm.weight.detach().clone()
        return real(model, data, s, **kw)

    monkeypatch.setattr(runs, "train", spy)
    out = P.out.model_copy(update={"models": str(tmp_path / "m"), "checkpoints": str(tmp_path / "c")})
    p = P.model_copy(
        update={
            "order": "continual",
            "stages": (0, 1),
            "context": 48,
            "batch": 4,
            "micro_batch": 4,
            "out": out,
        }
    )
    metrics, log = run_order(on_disk(records(stages=(0, 1)), tmp_path), tok, p)
    first, second = "seed-42/continual/0", "seed-42/continual/0-1"
    assert set(metrics) == {first, second}
    assert torch.equal(seen[f"train {first}"], torch.ones_like(seen[f"train {first}"]))  # from scratch
    after_first = load_hf(tmp_path / "m" / first).model.norm.weight
    assert torch.equal(seen[f"train {second}"], after_first)  # starts where stage 0 ended
    assert not torch.equal(after_first, torch.ones_like(after_first))
    assert {r["run"] for r in log} == set(metrics)


def test_only_what_a_later_run_reads_is_kept(tok, tmp_path, monkeypatch):
    """Every finished run's model and optimizer state used to stay in memory to the end."""
    import curll.train.runs as runs

    sizes: list[tuple[str, ...]] = []

    class Spy(runs.Finished):
        def put(self, run, model, optimizer_state, memory):
            super().put(run, model, optimizer_state, memory)
            sizes.append(tuple(self.held))

    monkeypatch.setattr(runs, "Finished", Spy)
    out = P.out.model_copy(update={"models": str(tmp_path / "m"), "checkpoints": str(tmp_path / "c")})
    p = P.model_copy(update={"order": ("independent", "joint", "continual"), "stages": (0, 1, 2),
                             "context": 48, "batch": 4, "micro_batch": 4, "out": out})  # fmt: skip
    run_order(on_disk(records(stages=(0, 1, 2)), tmp_path), tok, p)
    assert len(sizes) == 9 and max(len(h) for h in sizes) == 1
    assert {name for h in sizes for name in h} == {
        "seed-42/continual/0",
        "seed-42/continual/0-1",
    }  # the last is read by no one


def test_schedules():
    o = P.optim
    assert lr_at(5, 10, o.model_copy(update={"schedule": "constant"})) == o.lr
    cos = o.model_copy(update={"schedule": "cosine", "warmup": 0.2})
    assert lr_at(0, 10, cos) == pytest.approx(o.lr / 2) and lr_at(2, 10, cos) == pytest.approx(o.lr)
    assert lr_at(9, 10, cos) < o.lr * 0.2
    wsd = o.model_copy(update={"schedule": "wsd", "decay": 0.5})
    assert lr_at(4, 10, wsd) == o.lr and lr_at(9, 10, wsd) < o.lr


def test_a_list_of_orders_trains_each_and_equal_runs_give_equal_files(tok, tmp_path):
    import hashlib

    out = P.out.model_copy(update={"models": str(tmp_path / "m"), "checkpoints": str(tmp_path / "c")})
    p = P.model_copy(update={"order": ("independent", "continual"), "stages": (0, 1), "context": 48,
                             "batch": 4, "micro_batch": 4, "out": out})  # fmt: skip
    p = p.model_copy(update={"seeds": (42, 7)})
    metrics, _ = run_order(on_disk(records(stages=(0, 1)), tmp_path), tok, p)
    names = ["independent/0", "independent/1", "continual/0", "continual/0-1"]
    assert list(metrics) == [f"seed-{s}/{n}" for s in (42, 7) for n in names]
    assert [metrics[f"seed-{s}/continual/0"]["seed"] for s in (42, 7)] == [42, 7]

    def md5(name: str) -> str:
        return hashlib.md5((tmp_path / "m" / name / "model.safetensors").read_bytes()).hexdigest()

    for s in (42, 7):
        assert md5(f"seed-{s}/independent/0") == md5(f"seed-{s}/continual/0")  # the same run: the same bytes
        assert md5(f"seed-{s}/independent/1") != md5(f"seed-{s}/continual/0-1")
    assert md5("seed-42/independent/0") != md5("seed-7/independent/0")  # another seed: another model
    listed = saved_models(tmp_path / "m")
    assert [(m.name, m.order, m.seen, m.trained_to, m.seed) for m in listed][:4] == [
        ("seed-7/continual/0", "continual", (0,), 0, 7),
        ("seed-7/continual/0-1", "continual", (0, 1), 1, 7),
        ("seed-7/independent/0", "independent", (0,), 0, 7),
        ("seed-7/independent/1", "independent", (1,), 1, 7),
    ]
    assert [m.name for m in saved_models(tmp_path / "m", [42])] == [f"seed-42/{n}" for n in sorted(names)]


def test_a_run_whose_records_all_exceed_the_context_stops_naming_the_param(tok, tmp_path):
    from curll.errors import CurllError

    out = P.out.model_copy(update={"models": str(tmp_path / "m"), "checkpoints": str(tmp_path / "c")})
    p = P.model_copy(update={"order": ("joint",), "stages": (0,), "context": 4, "out": out})
    with pytest.raises(CurllError, match=r"none of the 6 train records of stage 0 fits") as err:
        run_order(on_disk(records(stages=(0,)), tmp_path), tok, p)
    assert err.value.field == "train.context"


def test_a_trained_stage_the_records_lack_is_named_before_any_run_trains(tok, tmp_path):
    """A stage added to train.stages that split never saw (an imported release without it), or
    whose every record is longer than the context: refused before stage 0's model is trained and
    written (before, the runs up to that stage trained first)."""
    from curll.errors import CurllError

    out = P.out.model_copy(update={"models": str(tmp_path / "m"), "checkpoints": str(tmp_path / "c")})
    orders = ("continual", "independent")
    p = P.model_copy(update={"order": orders, "stages": (0, 3), "context": 48, "out": out})
    said = r"stages.: split.out.records holds no train record of stage 3;"
    with pytest.raises(CurllError, match=said) as err:
        run_order(on_disk(records(stages=(0,)), tmp_path), tok, p)
    assert err.value.field == "train.stages" and not list(tmp_path.glob("[mc]/**/*.*"))
    long = records(stages=(0, 1))
    turns = [{"role": "user", "content": "Why? " * 5}, {"role": "assistant", "content": "So. " * 80}]
    words = json.dumps(turns)
    long.loc[long["stage"] == 1, "messages"] = words  # no passage to cut: longer than 48 tokens
    p = p.model_copy(update={"stages": (0, 1)})
    with pytest.raises(CurllError, match=r"context.: none of the 6 train records of stage 1 fits") as err:
        run_order(on_disk(long, tmp_path, "long.parquet"), tok, p)
    assert err.value.field == "train.context" and not list(tmp_path.glob("[mc]/**/*.*"))


def test_checkpoints_are_keyed_by_params_data_and_tokenizer(tok, tmp_path):
    """A resumed run must never pick up checkpoints of other params, records or tokenizer."""
    from curll.train.runs import checkpoint_key

    out = P.out.model_copy(update={"models": str(tmp_path / "m"), "checkpoints": str(tmp_path / "c")})
    p = P.model_copy(update={"order": ("joint",), "stages": (0,), "context": 48, "batch": 4,
                             "micro_batch": 4, "checkpoint_every": 1, "out": out})  # fmt: skip
    frame = records(stages=(0,))
    data = on_disk(frame, tmp_path)
    key = checkpoint_key(data, tok, p)
    run_order(data, tok, p)
    assert [d.name for d in (tmp_path / "c").iterdir()] == [key]
    assert (tmp_path / "c" / key / "seed-42" / "joint" / "0.pt").is_file()
    assert checkpoint_key(data, tok, p) == key
    assert checkpoint_key(data, tok, p.model_copy(update={"epochs": 1})) != key
    # a run's name holds its seed: adding a seed keeps the key (and the other seeds' checkpoints)
    assert checkpoint_key(data, tok, p.model_copy(update={"seeds": (42, 1)})) == key
    assert checkpoint_key(on_disk(frame.iloc[1:], tmp_path, "fewer.parquet"), tok, p) != key
    other = train_bpe([f"Question {i}? Birds sing." for i in range(50)], 320)  # another vocabulary
    assert checkpoint_key(data, other, p) != key


def test_checkpoints_of_other_training_code_are_never_resumed(tok, monkeypatch, tmp_path):
    """DVC reruns train when its code changes; the checkpoint must not bring the old result back."""
    import curll.train.runs as runs

    p = P.model_copy(update={"order": ("joint",), "stages": (0,)})
    data = on_disk(records(stages=(0,)), tmp_path)
    key = runs.checkpoint_key(data, tok, p)
    monkeypatch.setattr(runs, "code_digest", lambda: "a trainer with a bug fixed")
    assert runs.checkpoint_key(data, tok, p) != key


def test_the_code_digest_covers_the_model_package(monkeypatch):
    """The model moved out of curll.train: an edit to it must still change the checkpoint key."""
    from pathlib import Path

    import curll.train.runs as runs

    before = runs.code_digest()
    real = Path.read_bytes

    def edited(self: Path) -> bytes:
        return real(self) + (b"# edited" if self.parts[-2:] == ("model", "llama.py") else b"")

    monkeypatch.setattr(Path, "read_bytes", edited)
    assert runs.code_digest() != before


def test_the_untrained_model_is_the_preset_drawn_from_the_seed():
    from curll.model.llama import from_seed
    from curll.train.orders import untrained_model

    a, b = untrained_model(P, 320, 7), from_seed(preset(P.preset, vocab_size=320), P.init, 7)
    assert a.config == preset(P.preset, vocab_size=320)
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(x, y), name
    assert not torch.equal(untrained_model(P, 320, 8).lm_head.weight, a.lm_head.weight)


def test_mfu_is_reported_for_known_gpus_in_bf16_only(monkeypatch):
    from curll.train import runs

    assert runs.mfu(1e12, "cpu", torch.float32) is None
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "NVIDIA H100 80GB HBM3")
    assert runs.mfu(98.9e12, "cuda", torch.bfloat16) == pytest.approx(0.1)
    assert runs.mfu(98.9e12, "cuda", torch.float32) is None
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Some GPU")
    assert runs.mfu(98.9e12, "cuda", torch.bfloat16) is None


def test_a_full_disk_while_checkpointing_names_the_path_and_leaves_no_half_file(tok, tmp_path, monkeypatch):
    """The checkpoint is written to a file on a full disk (/dev/full: every write is ENOSPC, as
    the kernel reports it): a CurllError naming the checkpoint, the last good one left as it was
    and no temporary file beside it. torch's own writer turns the failure into a RuntimeError."""
    import os
    from pathlib import Path

    from curll.errors import CurllError

    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    data = pack(encode(records()["messages"].tolist(), tok, loss="assistant"), 48, pad_id=tok.pad_token_id)
    ckpt = tmp_path / "run.pt"
    train(fresh(tok), data, settings(epochs=1), ckpt=ckpt)  # a good checkpoint, then a longer run
    good = ckpt.read_bytes()
    real_save = torch.save

    def onto_full_disk(obj: Any, f: Any, *args: Any, **kw: Any) -> None:
        if isinstance(f, (str, os.PathLike)):
            real_save(obj, "/dev/full", *args, **kw)
            return
        full = os.open("/dev/full", os.O_WRONLY)  # the open file now writes to a full disk
        os.dup2(full, f.fileno())
        os.close(full)
        real_save(obj, f, *args, **kw)

    monkeypatch.setattr(torch, "save", onto_full_disk)
    with pytest.raises(CurllError, match="cannot write: No space left on device") as err:
        train(fresh(tok), data, settings(epochs=3), ckpt=ckpt)
    assert err.value.file == str(ckpt) and "\n" not in str(err.value)
    assert ckpt.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.pt"]
