"""The judge-free loss: against Hugging Face on the saved folder, packing-independent, and its matrices."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from curll.evaluate.loss import loss_matrices, loss_matrix, loss_metrics
from curll.evaluate.nll import record_nll
from curll.llm.bpe import train_bpe
from curll.model.config import preset
from curll.model.hf import save_hf
from curll.model.llama import from_seed

PASSAGE = "The cat sat by the door.\n\nIt waited for the rain to stop, then ran to the barn."
CHATS = [
    ("ir", [("system", "Be kind."), ("user", "Name a colour."), ("assistant", "Red is a colour.")]),
    ("cqa", [("user", f"{PASSAGE}\n\nQuestion: Where did the cat sit?"), ("assistant", "By the door.")]),
    ("csqa", [("user", f"{PASSAGE}\n\nRetell it in one line."), ("assistant", "A cat waited for the rain.")]),
    ("ir", [("user", "Count to three."), ("assistant", "One, two, three.")]),
]
PASSAGES = ["", PASSAGE, PASSAGE, ""]  # each record's passage: what a cut shortens


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A random tiny model saved in Hugging Face format, with its tokenizer."""
    tok = train_bpe([PASSAGE * 2, *(c for _, m in CHATS for _, c in m)], 400)
    folder = tmp_path_factory.mktemp("model") / "m"
    save_hf(from_seed(preset("tiny", vocab_size=len(tok)), "normal", 7), tok, folder)
    return folder, tok


def messages(chat) -> str:
    return json.dumps([{"role": r, "content": c} for r, c in chat])


def hf_nll(folder, tok, chat) -> tuple[float, int]:
    """Independently: the chat template's prompt, then the answer and its end marker, through
    AutoModelForCausalLM; summed NLL of the answer tokens."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
    model.eval()  # type: ignore[no-untyped-call]
    msgs = [{"role": r, "content": c} for r, c in chat]
    prompt = tok.apply_chat_template(msgs[:-1], add_generation_prompt=True, tokenize=False)
    p_ids = tok(prompt, add_special_tokens=False)["input_ids"]
    a_ids = tok(msgs[-1]["content"] + "<|im_end|>", add_special_tokens=False)["input_ids"]
    ids = torch.tensor([p_ids + a_ids])
    with torch.no_grad():
        logits = model(ids).logits[0, len(p_ids) - 1 : -1].float()
    nll = torch.nn.functional.cross_entropy(logits, torch.tensor(a_ids), reduction="sum")
    return float(nll), len(a_ids)


def test_record_nll_equals_hugging_face_on_the_saved_folder(saved):
    folder, tok = saved
    from curll.model.hf import load_hf

    types = [t for t, _ in CHATS]
    # several records share a row (document attention keeps them apart), two rows a forward pass
    nll, n = record_nll(
        load_hf(folder),
        [messages(c) for _, c in CHATS],
        types,
        tok,
        context=128,
        micro_batch=2,
        passages=PASSAGES,
    )
    for i, (_, chat) in enumerate(CHATS):
        want, tokens = hf_nll(folder, tok, chat)
        assert n[i] == tokens and nll[i] == pytest.approx(want, rel=1e-4), i


def test_packing_batching_and_a_record_too_long(saved):
    folder, tok = saved
    from curll.model.hf import load_hf

    model = load_hf(folder)
    texts, types = [messages(c) for _, c in CHATS], [t for t, _ in CHATS]
    packed = record_nll(model, texts, types, tok, context=256, micro_batch=4, passages=PASSAGES)
    alone = record_nll(model, texts, types, tok, context=40, micro_batch=1, passages=PASSAGES)  # one a row
    assert (alone[1][[1, 2]] > 0).all() and (alone[1] == packed[1]).all()  # passages cut, answers whole
    with pytest.raises(ValueError, match="need their passages"):
        record_nll(model, texts, types, tok, context=40, micro_batch=1)
    assert (
        np.allclose(packed[0][[0, 3]], alone[0][[0, 3]], rtol=1e-5)
        and (packed[1][[0, 3]] == alone[1][[0, 3]]).all()
    )
    again = record_nll(model, texts, types, tok, context=256, micro_batch=4, passages=PASSAGES)
    assert (again[0] == packed[0]).all()  # deterministic
    tiny = record_nll(
        model, texts, types, tok, context=8, micro_batch=4, passages=PASSAGES
    )  # nothing fits, nothing to cut in IR
    assert math.isnan(tiny[0][0]) and tiny[1][0] == 0


def losses() -> pd.DataFrame:
    """Continual models 0 and 1 and an untrained one; stage 0's loss rises from 2 to 3 (forgetting)."""
    cells = {("continual/0", 0): {0: 2.0, 1: 5.0}, ("continual/0-1", 1): {0: 3.0, 1: 2.5},
             ("untrained", -1): {0: 6.0, 1: 6.0}}  # fmt: skip
    rows = []
    for (run, t), by_stage in cells.items():
        for stage, per_token in by_stage.items():
            for k, tokens in enumerate((10, 30)):  # two records a cell, of 10 and 30 answer tokens
                rows.append({"record_id": f"{stage}{k}", "split": "test", "stage": stage, "type": "ir",
                             "run": run, "order": run.split("/")[0], "trained_to": t,
                             "nll": per_token * tokens, "tokens": tokens})  # fmt: skip
    return pd.DataFrame(rows)


def test_loss_matrices_and_metrics_with_their_signs():
    j = loss_matrix(losses(), "continual", "ir")
    assert j.to_numpy().tolist() == [[2.0, 5.0], [3.0, 2.5]] and loss_matrix(
        losses(), "continual", "all"
    ).equals(j)
    assert loss_matrix(losses(), "continual", "ir", value="n").to_numpy().tolist() == [[2, 2], [2, 2]]
    m = loss_metrics(loss_matrices(losses(), ["ir"]), ["ir"])["continual"]["ir"]
    assert m["mean_nll"] == pytest.approx(2.75)  # (3 + 2.5) / 2: a loss, lower is better
    assert m["FGT_nll_rise"] == pytest.approx(1.0)  # stage 0 went from 2 to 3: forgetting is positive
    assert m["BWT_nll_fall"] == pytest.approx(-1.0)
    assert m["FWT_zero_shot_nll_fall"] == pytest.approx(1.0)  # model 0 on stage 1: 5 against untrained 6
    assert m["series"]["mean_nll"] == {"0": 2.0, "1": 2.75}


def test_a_record_that_was_not_scored_leaves_its_cell_empty_not_its_row():
    table = losses()
    gone = table["run"] == "continual/0-1"
    table.loc[gone, ["nll", "tokens"]] = [np.nan, 0]
    j = loss_matrix(table, "continual", "ir")
    assert list(j.index) == [0, 1] and j.loc[1].isna().all()
    assert list(loss_matrix(table, "continual", "ir", value="n").loc[1]) == [0, 0]


def test_the_loss_table_refuses_a_null_nll_on_scored_tokens_and_a_unigram_nll_apart_from_it():
    """A null nll over tokens > 0 would be counted as 0 nats by the matrix and left out by the
    bootstrap: the stage boundary refuses it, as it refuses unigram_nll null where nll is not."""
    import pandera.errors

    from curll.schemas.evaluate import LossSchema

    good = pd.DataFrame([{"record_id": "a" * 16, "split": "test", "stage": 0, "type": "ir",
                          "run": "seed-42/continual/0", "order": "continual", "seed": 42, "trained_to": 0,
                          "nll": 12.0, "tokens": 4, "unigram_nll": 20.0}])  # fmt: skip
    LossSchema.validate(good)
    LossSchema.validate(good.assign(nll=math.nan, unigram_nll=math.nan, tokens=0))  # unscored: fine
    for bad in (good.assign(nll=math.nan, unigram_nll=math.nan), good.assign(unigram_nll=math.nan),
                good.assign(tokens=0)):  # fmt: skip
        with pytest.raises(pandera.errors.SchemaError, match="null exactly where tokens is 0"):
            LossSchema.validate(bad)


def test_a_row_check_names_the_row_once_not_every_column():
    """A check of whole rows fails once per column in pandera's report: the error names the
    row and the check (whose name says which fields), once, not the first column it lists."""
    from curll.artifacts import validate
    from curll.errors import CurllError
    from curll.schemas.evaluate import LossSchema

    row = {"record_id": "a" * 16, "split": "test", "stage": 0, "type": "ir", "run": "seed-42/continual/0",
           "order": "continual", "seed": 42, "trained_to": 0, "nll": 12.0, "tokens": 4,
           "unigram_nll": 20.0}  # fmt: skip
    table = pd.DataFrame([row, {**row, "record_id": "b" * 16, "nll": math.nan}])
    with pytest.raises(CurllError) as err:
        validate(table, LossSchema, source="losses.parquet")
    assert (err.value.row, err.value.field) == (1, None)
    assert str(err.value).count("null exactly where tokens is 0") == 1 and "record_id" not in str(err.value)
