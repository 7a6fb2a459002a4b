"""Checkpoints curll did not train: asked and scored in the CurLL authors' text layout, with their
own tokenizer, as transformers saved them. The expected numbers come from transformers' own
``LlamaForCausalLM`` on the authors' layout written out here from the release notes, not from
curll's encoder."""

from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch

from curll.chat import record_chat, user_turn
from curll.config import parse_params
from curll.errors import CurllError
from curll.evaluate.items import fit_prompt
from curll.evaluate.layouts import load_tokenizer
from curll.evaluate.models import scored_models, untrained_models
from curll.evaluate.nll import record_nll
from curll.model.hf import load_hf, unreadable
from curll.yamlio import load_yaml
from harness.checkpoints import EOS, hub_tokenizer, save_checkpoint

ROOT = Path(__file__).resolve().parents[2]
PASSAGE = "Sam has two red apples. He gives one to Pia.\n\nNow Sam has one apple."
#: (type, system, question, passage, answer) of four records; a passage and a question with a
#: blank line in them (a user turn alone cannot tell where one ends and the other begins)
ROWS = [
    ("cqa", "Answer from the passage.", "How many apples does Sam have now?", PASSAGE, "He has one apple."),
    ("csqa", "", "Tell the story again in one line.", PASSAGE, "Sam gave Pia an apple."),
    ("csqa", "", "Read it again.\n\nWho got an apple?", PASSAGE, "Pia got one."),
    ("ir", "Be kind.", "Name a fruit that is red.", "", "An apple is red."),
]


def hub_text(question: str, passage: str) -> str:
    """The authors' training text up to the answer (the release notes' layout)."""
    system = f"<|system|>\n{passage}\n" if passage else ""
    return f"{system}<|user|>\n{question}\n<|assistant|>\n"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpus = [hub_text(q, p) + a for _, _, q, p, a in ROWS] * 5
    tok = hub_tokenizer(corpus, pad=False)  # no padding token: padding falls back to end-of-text
    return save_checkpoint(tmp_path_factory.mktemp("hub") / "ckpt", tok, seed=3)


#: a record whose answer starts with two spaces: in the authors' text the prompt's last newline and
#: the first space are one token of a byte-level tokenizer that learned "\\n " (the ``spaced`` one)
SPACED = ("ir", "", "Name a fruit.", "", "  An apple.")


def _metaspace(corpus: list[str]) -> Any:
    """A SentencePiece-style tokenizer (Llama-2, Mistral): a ▁ before each text it encodes."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    t = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    t.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
    t.decoder = decoders.Metaspace(prepend_scheme="first")
    specials = ["<unk>", "<s>", EOS] + [f"<0x{i:02X}>" for i in range(256)]
    t.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=400, special_tokens=specials))
    return PreTrainedTokenizerFast(tokenizer_object=t, eos_token=EOS, bos_token="<s>", unk_token="<unk>")  # type: ignore[no-untyped-call]


@pytest.fixture(scope="module")
def sentencepiece(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint whose tokenizer reads pieces otherwise alone than joined (a ▁ before each)."""
    corpus = [hub_text(q, p) + a for _, _, q, p, a in ROWS] * 5
    return save_checkpoint(tmp_path_factory.mktemp("sp") / "sp", _metaspace(corpus), seed=3)


@pytest.fixture(scope="module")
def spaced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level checkpoint whose tokenizer has a token across the join of prompt and answer, and
    a post-processor that trims offsets off a token's spaces (as GPT-NeoX's and RoBERTa's do)."""
    from tokenizers import processors

    corpus = [hub_text(q, p) + a for _, _, q, p, a in [*ROWS, SPACED]] * 5 + ["\n  x"] * 50
    tok = hub_tokenizer(corpus, pad=False)
    assert "\u010a\u0120" in tok.get_vocab()  # "\n " as one token (byte-level's own letters)
    tok.backend_tokenizer.post_processor = processors.ByteLevel(trim_offsets=True)
    return save_checkpoint(tmp_path_factory.mktemp("spaced") / "ckpt", tok, seed=4)


def _whole_text_nll(folder: Path, rows: list[tuple[str, str, str, str, str]]) -> list[tuple[float, int]]:
    """transformers' summed NLL and count of each row's answer tokens, the authors' text tokenized
    whole: the tokens that hold a character of the answer, its newline or the end-of-text token,
    found by decoding (the first token whose text, decoded with those before it, passes the prompt),
    not by the offsets curll reads."""
    from transformers import AutoTokenizer, LlamaForCausalLM

    hf_tok = AutoTokenizer.from_pretrained(str(folder))
    model = LlamaForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval()  # type: ignore[no-untyped-call]
    out = []
    for _, _, q, p, a in rows:
        prompt = hub_text(q, p)
        ids = hf_tok(prompt + a + "\n" + EOS, add_special_tokens=False)["input_ids"]
        decoded = [hf_tok.decode(ids[: j + 1], clean_up_tokenization_spaces=False) for j in range(len(ids))]
        assert decoded[-1] == prompt + a + "\n" + EOS
        first = next(j for j, text in enumerate(decoded) if len(text) > len(prompt))
        assert ids[-1] == hf_tok.eos_token_id
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0, first - 1 : -1]
        nll = torch.nn.functional.cross_entropy(logits, torch.tensor(ids[first:]), reduction="sum")
        out.append((float(nll), len(ids) - first))
    return out


@pytest.mark.parametrize("kind", ["byte-level", "sentencepiece", "spaced"])
def test_the_loss_in_the_hub_layout_equals_transformers_on_the_authors_text(
    request: pytest.FixtureRequest, kind: str
):
    """Whatever the tokenizer reads apart, the authors' layout scores the tokens of their text
    tokenized whole: a ▁ before the text, a token across the join of prompt and answer."""
    folder = request.getfixturevalue({"byte-level": "checkpoint"}.get(kind, kind))
    rows = [*ROWS, SPACED] if kind == "spaced" else ROWS
    messages = [record_chat(s, user_turn(t, q, p), a) for t, s, q, p, a in rows]
    tok = load_tokenizer(folder, "curll-hub")
    assert tok.pad_token_id is None or kind == "sentencepiece"
    nll, n = record_nll(load_hf(folder), messages, [r[0] for r in rows], tok, context=512,
                        micro_batch=3, layout="curll-hub", passages=[r[3] for r in rows])  # fmt: skip
    want = _whole_text_nll(folder, rows)
    assert list(n) == [count for _, count in want]
    assert list(nll) == pytest.approx([total for total, _ in want], rel=1e-4)


def test_the_hub_layout_needs_each_records_passage(checkpoint: Path):
    from curll.evaluate.layouts import encode

    tok = load_tokenizer(checkpoint, "curll-hub")
    with pytest.raises(ValueError, match="need their passages"):
        encode("curll-hub", [record_chat("", user_turn("cqa", "Why?", PASSAGE), "So.")], ["cqa"], tok)


def test_a_hub_records_passage_and_answer_are_found_in_its_text_tokenized_whole(checkpoint: Path):
    from curll.evaluate.layouts import encode

    tok = load_tokenizer(checkpoint, "curll-hub")
    record = record_chat("", user_turn("cqa", "Why?", PASSAGE), "So.")
    (doc,) = encode("curll-hub", [record], ["cqa"], tok, [PASSAGE])
    assert doc.passage is not None
    assert tok.decode(doc.tokens[slice(*doc.passage)]) == PASSAGE
    scored = [t for t, on in zip(doc.tokens, doc.trained, strict=True) if on]
    assert tok.decode(scored) == "So.\n" + EOS
    assert tok.decode(doc.tokens[:-1]) == hub_text("Why?", PASSAGE) + "So.\n"


def test_a_test_prompt_in_the_hub_layout_is_the_training_text_up_to_the_answer(checkpoint: Path):
    tok = load_tokenizer(checkpoint, "curll-hub")
    for kind, system, question, passage, _ in ROWS:
        item = {"type": kind, "system": system, "question": question, "context": passage}
        fitted = fit_prompt(item, tok, 400, "curll-hub")
        assert fitted is not None and fitted[1] is False
        chat = [{"role": r, "content": c} for r, c in fitted[0]]
        text = tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        assert text == hub_text(question, passage)


def test_a_long_passage_is_cut_in_the_hub_layout_never_the_question(checkpoint: Path):
    tok = load_tokenizer(checkpoint, "curll-hub")
    item = {"type": "cqa", "system": "", "question": "How many apples?", "context": PASSAGE * 20}
    fitted = fit_prompt(item, tok, 120, "curll-hub")
    assert fitted is not None and fitted[1] is True
    (_, system), (_, user) = fitted[0]
    assert system.endswith("...") and len(system) < len(PASSAGE * 20) and user == "How many apples?"
    text = tok.apply_chat_template([{"role": "system", "content": system}, {"role": "user", "content": user}],
                                   add_generation_prompt=True, tokenize=False)  # fmt: skip
    assert len(tok(text, add_special_tokens=False)["input_ids"]) <= 120


def _params(entries: list[dict[str, Any]], folder: Path) -> Any:
    data = load_yaml(ROOT / "params.yaml")
    data["evaluate"]["checkpoints"] = {"dir": str(folder), "models": entries}
    return parse_params(data, source="params.yaml")


def test_checkpoints_are_named_as_curll_runs_and_the_baseline_takes_their_shape(checkpoint: Path):
    params = _params([
        {"order": "continual", "stages": [0, 1], "path": "ckpt", "seed": 5},
        {"order": "independent", "stages": [1], "path": "ckpt", "seed": 5, "layout": "curll-hub"},
    ], checkpoint.parent)  # fmt: skip
    models = scored_models(params)
    assert [(m.name, m.order, m.trained_to, m.seed, m.layout) for m in models] == [
        ("seed-5/continual/0-1", "continual", 1, 5, "curll-hub"),
        ("seed-5/independent/1", "independent", 1, 5, "curll-hub"),
    ]
    (baseline,) = untrained_models(params, [5], tokenizer=None)
    weights = baseline.build()
    assert baseline.model.name == "seed-5/untrained" and baseline.model.layout == "curll-hub"
    assert weights.config == load_hf(checkpoint).config and baseline.tokenizer.eos_token == EOS
    assert not torch.equal(weights.state_dict()["model.embed_tokens.weight"],
                           load_hf(checkpoint).state_dict()["model.embed_tokens.weight"])  # fmt: skip


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda f: shutil.rmtree(f), r"no config\.json"),
        (lambda f: (f / "config.json").write_text(json.dumps({"model_type": "gpt2"})), "model_type 'gpt2'"),
        (lambda f: (f / "model.safetensors").rename(f / "model-00001-of-00002.safetensors"),
         "no model.safetensors"),
        (lambda f: (f / "tokenizer_config.json").unlink(), "no tokenizer_config.json"),
        (lambda f: (f / "config.json").write_text('{"model_type": "llama",'),
         "config.json is not readable JSON"),
        (lambda f: _config(f, rope_scaling={"rope_type": "linear", "factor": 2.0}),
         "config.json sets rope_scaling, which curll's model does not implement"),
        (lambda f: _config(f, hidden_act="gelu"), "sets hidden_act"),
        (lambda f: _config(f, attention_bias=True, head_dim=16), "sets attention_bias, head_dim"),
        (lambda f: _cut(f / "model.safetensors"), r"cannot be read \(SafetensorError: "),
        (lambda f: (f / "model.safetensors").write_text("version https://git-lfs.github.com/spec/v1\n"),
         r"cannot be read \(SafetensorError"),
        (lambda f: _config(f, num_hidden_layers=3), "model.safetensors has no model.layers.2"),
        (lambda f: _config(f, num_hidden_layers=1), "holds model.layers.1.input_layernorm.weight, which"),
        (lambda f: _config(f, num_attention_heads=None), "config.json holds a value of the wrong type"),
        (lambda f: _config(f, rope_parameters={"rope_theta": 1e4, "rope_type": "llama3"}),
         "sets rope_scaling"),
        (lambda f: _config(f, intermediate_size=48),
         r"model.layers.0.mlp.down_proj.weight of shape \[32, 64\], the config's model \[32, 48\]"),
        (lambda f: _config(f, max_position_embeddings=16),  # every answer would be refused, silently
         r"holds 16 positions \(max_position_embeddings\), fewer than [a-z_.+ ]+ = \d+"),
    ],
)  # fmt: skip
def test_a_checkpoint_curll_cannot_read_is_refused_naming_its_entry(
    checkpoint: Path, tmp_path: Path, spoil, message
):
    shutil.copytree(checkpoint, tmp_path / "bad")
    spoil(tmp_path / "bad")
    params = _params([{"order": "joint", "stages": [0], "path": "bad"}], tmp_path)
    with pytest.raises(CurllError, match=message) as err:
        scored_models(params)
    assert err.value.field == "evaluate.checkpoints.models.0.path"


@pytest.mark.parametrize("path", ["link", "sub/ckpt"])
def test_a_checkpoint_behind_a_linked_folder_is_refused_as_dvc_would_not_see_it_change(
    checkpoint: Path, tmp_path: Path, path: str
):
    checkpoints = tmp_path / "checkpoints"
    checkpoints.mkdir()
    (checkpoints / "link").symlink_to(checkpoint, target_is_directory=True)
    (checkpoints / "sub").symlink_to(checkpoint.parent, target_is_directory=True)
    params = _params([{"order": "joint", "stages": [0], "path": path}], checkpoints)
    with pytest.raises(
        CurllError, match=r"is a symbolic link to a folder outside .*, which DVC does not"
    ) as err:
        scored_models(params)
    assert err.value.field == "evaluate.checkpoints.models.0.path"
    shutil.copytree(checkpoint, checkpoints / "copy")
    (checkpoints / "latest").symlink_to(
        checkpoints / "copy", target_is_directory=True
    )  # hashed where it lies
    for kept in ("copy", "latest"):
        assert scored_models(_params([{"order": "joint", "stages": [0], "path": kept}], checkpoints))


def _config(folder: Path, **changes: Any) -> None:
    path = folder / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # a download cut short


@pytest.mark.parametrize(
    ("spoil", "layout", "message"),
    [
        (lambda f: (f / "tokenizer.json").unlink(), "curll-hub", r"tokenizer cannot be loaded \(ValueError"),
        (lambda f: _tokenizer_config(f, tokenizer_class="LlamaTokenizer", drop="tokenizer.json"),
         "curll-hub", "reads 'The cat sat on the mat.' as no token but its unknown one"),  # partly downloaded
        (lambda f: _config(f, vocab_size=100), "curll-hub",
         r"the tokenizer gives ids up to \d+, past the model's embedding table of 100"),
        (lambda f: _tokenizer_config(f, eos_token=None), "curll-hub", "no end-of-sequence token"),
    ],
)  # fmt: skip
def test_a_tokenizer_that_cannot_score_its_model_is_refused_naming_the_entry(
    checkpoint: Path, tmp_path: Path, spoil, layout, message
):
    from curll.evaluate.models import tokenizers

    shutil.copytree(checkpoint, tmp_path / "bad")
    spoil(tmp_path / "bad")
    params = _params([{"order": "joint", "stages": [0], "path": "bad", "layout": layout}], tmp_path)
    with pytest.raises(CurllError, match=message) as err:
        tokenizers(params, [m._replace(folder=tmp_path / "bad") for m in _unchecked(params)], tokenizer=None)
    assert err.value.field == "evaluate.checkpoints.models.0.path"


def test_prompts_are_rendered_with_the_layouts_template_not_the_folders(checkpoint: Path, tmp_path: Path):
    """A layout's template replaces the folder's: one that fails, or that adds a default system
    turn, changes no prompt (training never saw it)."""
    from curll.evaluate.layouts import load_tokenizer
    from curll.layouts import layout_of

    chat = [{"role": "user", "content": "Hi."}]
    smol = "<|im_start|>system\nYou are SmolLM.<|im_end|>\n{{ messages }}"  # a default system turn
    for own in ("{{ raise_exception('no') }}", smol):
        shutil.copytree(checkpoint, tmp_path / "own", dirs_exist_ok=True)
        _tokenizer_config(tmp_path / "own", chat_template=own)
        for layout in ("curll", "curll-hub"):
            tok = load_tokenizer(tmp_path / "own", layout)
            assert tok.chat_template == layout_of(layout).template
            assert "SmolLM" not in tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)


def _unchecked(params: Any) -> list[Any]:
    """The checkpoint entries as scored_models makes them, without its folder checks."""
    from curll.train.orders import SavedModel

    c = params.evaluate.checkpoints
    return [SavedModel(m.name, m.order, tuple(m.stages), m.seed, Path(c.dir) / m.path, m.layout)
            for m in c.models]  # fmt: skip


def _tokenizer_config(folder: Path, drop: str = "", **changes: Any) -> None:
    if drop:
        (folder / drop).unlink()
    path = folder / "tokenizer_config.json"
    data = {**json.loads(path.read_text()), **changes}
    path.write_text(json.dumps({k: v for k, v in data.items() if v is not None}))
    special = folder / "special_tokens_map.json"
    if special.is_file() and changes.get("eos_token", "") is None:
        kept = {k: v for k, v in json.loads(special.read_text()).items() if k != "eos_token"}
        special.write_text(json.dumps(kept))


def test_a_tied_checkpoint_may_store_its_output_matrix_only_as_the_embeddings(checkpoint, tmp_path):
    """A stored copy of the embeddings changes nothing; another matrix is refused: transformers
    scores with it (untied) while the config says tied."""
    from safetensors.torch import load_file, save_file
    from transformers import AutoModelForCausalLM

    shutil.copytree(checkpoint, tmp_path / "tied")
    weights = tmp_path / "tied" / "model.safetensors"
    state = load_file(str(weights))
    state["lm_head.weight"] = state["model.embed_tokens.weight"].clone()  # the same matrix, stored twice
    save_file(state, str(weights), metadata={"format": "pt"})
    assert unreadable(tmp_path / "tied") == ""
    ids = torch.tensor([[1, 2, 3, 4]])
    hf: Any = AutoModelForCausalLM.from_pretrained(tmp_path / "tied")
    hf.eval()
    mine = load_hf(tmp_path / "tied")
    mine.eval()
    with torch.no_grad():
        theirs, ours = hf(ids).logits, mine(ids)  # (1, T, V) each
    assert ours.shape == theirs.shape and torch.allclose(ours, theirs, atol=1e-4)
    state["lm_head.weight"] = torch.randn_like(state["model.embed_tokens.weight"])  # not the embeddings
    save_file(state, str(weights), metadata={"format": "pt"})
    why = unreadable(tmp_path / "tied")
    assert "stores a lm_head.weight that differs from model.embed_tokens.weight" in why


@pytest.mark.parametrize(
    ("entries", "key", "message"),
    [
        ([{"order": "continual", "stages": [1], "path": "a"}], "evaluate.checkpoints.models.0.stages",
         r"a continual model of stage 1 has seen stages \[0, 1\], not \[1\]"),
        ([{"order": "independent", "stages": [7], "path": "a"}], "evaluate.checkpoints.models.0.stages",
         "last stage 7 is not in train.stages"),
        ([{"order": "joint", "stages": [0], "path": "a", "layout": "chatml"}],
         "evaluate.checkpoints.models.0.layout", "unknown layout 'chatml'"),
        ([{"order": "slow", "stages": [0], "path": "a"}], "evaluate.checkpoints.models.0.order",
         "unknown order"),
        ([{"order": "joint", "stages": [0], "path": "a"}, {"order": "joint", "stages": [0], "path": "b"}],
         "evaluate.checkpoints.models", r"two checkpoints of the same run seed-0/joint/0"),
        ([{"order": "joint", "stages": [0], "path": "../elsewhere"}], "evaluate.checkpoints.models.0.path",
         "must be a path under evaluate.checkpoints.dir"),
        ([{"order": "joint", "stages": [0], "path": "/abs/ckpt"}], "evaluate.checkpoints.models.0.path",
         "must be a path under evaluate.checkpoints.dir"),
    ],
)  # fmt: skip
def test_bad_checkpoint_entries_name_the_key(entries, key, message):
    data = load_yaml(ROOT / "params.yaml")
    data = copy.deepcopy(data)
    data["evaluate"]["checkpoints"] = {"dir": "checkpoints", "models": entries}
    with pytest.raises(CurllError, match=message) as err:
        parse_params(data, source="params.yaml")
    assert err.value.field == key


def test_no_scaling_written_as_a_default_rope_type_is_read(checkpoint: Path, tmp_path: Path):
    shutil.copytree(checkpoint, tmp_path / "ok")
    _config(tmp_path / "ok", rope_scaling={"rope_type": "default"}, head_dim=8, mlp_bias=False)
    params = _params([{"order": "joint", "stages": [0], "path": "ok"}], tmp_path)
    assert [m.name for m in scored_models(params)] == ["seed-0/joint/0"]


def test_each_checkpoint_is_checked_against_its_own_table_though_they_share_a_tokenizer(checkpoint, tmp_path):
    from curll.evaluate.models import tokenizers

    for name in ("a", "b"):
        shutil.copytree(checkpoint, tmp_path / name)
    _config(tmp_path / "b", vocab_size=100)  # same tokenizer files, a smaller table
    params = _params([{"order": "joint", "stages": [0], "path": "a"},
                      {"order": "joint", "stages": [0], "path": "b", "seed": 1}], tmp_path)  # fmt: skip
    with pytest.raises(CurllError, match="past the model's embedding table of 100") as err:
        tokenizers(params, _unchecked(params), tokenizer=None)
    assert err.value.field == "evaluate.checkpoints.models.1.path"


def test_a_tokenizer_that_reads_pieces_otherwise_than_the_whole_is_refused_in_curlls_layout(
    checkpoint: Path, sentencepiece: Path, tmp_path: Path
):
    """curll's layout tokenizes records piece by piece (as training did); a tokenizer that puts a ▁
    before every piece would be scored on tokens its model never saw: refused, naming the entry.
    The authors' layout tokenizes whole and takes it; the byte-level tokenizer passes both."""
    from curll.evaluate.layouts import scoring_problem
    from curll.evaluate.models import tokenizers

    for layout in ("curll", "curll-hub"):
        assert scoring_problem(load_tokenizer(checkpoint, layout), layout) == ""
    assert scoring_problem(load_tokenizer(sentencepiece, "curll-hub"), "curll-hub") == ""
    shutil.copytree(sentencepiece, tmp_path / "sp")
    params = _params([{"order": "joint", "stages": [0], "path": "sp", "layout": "curll"}], tmp_path)
    with pytest.raises(CurllError, match="otherwise alone than joined") as err:
        tokenizers(params, [m._replace(folder=tmp_path / "sp") for m in _unchecked(params)], tokenizer=None)
    assert err.value.field == "evaluate.checkpoints.models.0.path"


def test_the_hub_layout_refuses_a_tokenizer_without_character_offsets():
    from types import SimpleNamespace

    from curll.evaluate.layouts import scoring_problem

    assert "only a fast tokenizer" in scoring_problem(SimpleNamespace(is_fast=False), "curll-hub")


def test_a_tokenizer_id_past_the_table_is_refused_though_it_counts_fewer_tokens(checkpoint: Path, tmp_path):
    from curll.evaluate.models import tokenizers

    shutil.copytree(checkpoint, tmp_path / "gap")
    path = tmp_path / "gap" / "tokenizer.json"
    data = json.loads(path.read_text())
    vocab = json.loads((tmp_path / "gap" / "config.json").read_text())["vocab_size"]
    eos = next(t for t in data["added_tokens"] if t["content"] == EOS)
    old, eos["id"] = eos["id"], vocab + 10  # a gap in the ids: the count stays, the largest id moves
    data["model"]["vocab"] = {k: (vocab + 10 if v == old else v) for k, v in data["model"]["vocab"].items()}
    path.write_text(json.dumps(data))
    params = _params([{"order": "joint", "stages": [0], "path": "gap", "layout": "curll-hub"}], tmp_path)
    with pytest.raises(
        CurllError, match=rf"ids up to {vocab + 10}, past the model's embedding table of {vocab}"
    ):
        tokenizers(params, [m._replace(folder=tmp_path / "gap") for m in _unchecked(params)], tokenizer=None)


def test_a_hub_record_over_the_context_loses_its_passages_end_and_keeps_its_answer(checkpoint: Path):
    """A record longer than the context is scored with its passage cut, as training would pack it:
    the answer's tokens are the same tokens with the same count; the cut ends the passage."""
    from curll.chat import CUT
    from curll.evaluate.layouts import encode
    from curll.train.data import fit

    tok = load_tokenizer(checkpoint, "curll-hub")
    long = PASSAGE * 6
    record = record_chat("", user_turn("cqa", "How many apples?", long), "He has one apple.")
    (doc,) = encode("curll-hub", [record], ["cqa"], tok, [long])
    cut = tok(CUT, add_special_tokens=False)["input_ids"]
    context = len(doc.tokens) - 1 - 40
    fitted = fit(doc, context, cut)
    assert fitted is not None and fitted.passage is not None and len(fitted.tokens) - 1 <= context
    answer = [t for t, on in zip(doc.tokens, doc.trained, strict=True) if on]
    assert [t for t, on in zip(fitted.tokens, fitted.trained, strict=True) if on] == answer
    start, end = fitted.passage
    assert fitted.tokens[end - len(cut) : end] == cut and long.startswith(
        tok.decode(fitted.tokens[start : end - len(cut)])
    )
    (nll,), (n,) = record_nll(load_hf(checkpoint), [record], ["cqa"], tok, context=context, micro_batch=1,
                              layout="curll-hub", passages=[long])  # fmt: skip
    assert n == len(answer) and math.isfinite(nll)  # scored, not left out (NaN)


@pytest.mark.parametrize("named", ["GPT2Tokenizer", "Qwen2Tokenizer", "LlamaTokenizerFast"])
def test_a_folders_tokenizer_json_is_read_as_it_is_whatever_class_its_config_names(
    tmp_path: Path, named: str
):
    """A model-specific class would have transformers rebuild the pre-tokenizer: with SmolLM2's
    (digits one by one) over a vocabulary that merged digits, "12345" would become fewer tokens
    than the folder's tokenizer.json makes of it."""
    from tokenizers import Tokenizer, pre_tokenizers

    numbers = [f"Sam has {n} apples and {n + 1} pears." for n in range(12000, 12400)]
    folder = save_checkpoint(tmp_path / "ckpt", hub_tokenizer(numbers), seed=1)  # a vocabulary merging digits
    raw = Tokenizer.from_file(str(folder / "tokenizer.json"))
    assert len(raw.encode("12345").ids) < 5
    raw.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    raw.save(str(folder / "tokenizer.json"))
    _tokenizer_config(folder, tokenizer_class=named)
    text = "<|user|>\nSam has 12345 apples. Ca va?\n<|assistant|>\n12345 apples.\n"
    own = raw.encode(text, add_special_tokens=False).ids
    tok = load_tokenizer(folder, "curll-hub")
    assert tok(text, add_special_tokens=False)["input_ids"] == own
    assert tok.eos_token == EOS and tok.eos_token_id == raw.token_to_id(EOS)
    from curll.llm.transformers_backend import TransformersBackend  # the backend that answers reads it so

    backend = TransformersBackend(str(folder), device="cpu")
    assert backend.tokenizer(text, add_special_tokens=False)["input_ids"] == own


def test_swish_is_silu_by_another_name(checkpoint: Path, tmp_path: Path):
    from transformers.activations import ACT2FN

    assert torch.equal(ACT2FN["swish"](torch.linspace(-3, 3, 7)), ACT2FN["silu"](torch.linspace(-3, 3, 7)))
    shutil.copytree(checkpoint, tmp_path / "swish")
    _config(tmp_path / "swish", hidden_act="swish")
    assert unreadable(tmp_path / "swish") == ""


def _slow_only(checkpoint: Path, folder: Path, vocab_size: int) -> Path:
    """``checkpoint``'s model with a byte-level BPE of ``vocab_size`` kept only in the slow files
    (``vocab.json``, ``merges.txt``) and one fixed ``tokenizer_config.json``: two such folders
    differ only in the files a tokenizer.json-less download holds."""
    corpus = [hub_text(q, p) + a for _, _, q, p, a in ROWS] * 5
    model = json.loads(hub_tokenizer(corpus, vocab_size=vocab_size).backend_tokenizer.to_str())["model"]
    shutil.copytree(checkpoint, folder)
    for name in ("tokenizer.json", "special_tokens_map.json"):
        (folder / name).unlink(missing_ok=True)
    (folder / "vocab.json").write_text(json.dumps(model["vocab"]))
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    config = {"tokenizer_class": "GPT2Tokenizer", "eos_token": EOS, "bos_token": EOS, "unk_token": EOS}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


@pytest.mark.filterwarnings("ignore:Deprecated in 0.9.0:DeprecationWarning")  # transformers' slow GPT-2 class
def test_checkpoints_whose_slow_tokenizer_files_differ_each_get_their_own(checkpoint: Path, tmp_path: Path):
    """The tokenizers were shared by the bytes of tokenizer.json, tokenizer_config.json and
    special_tokens_map.json alone: a second folder with other vocab.json and merges.txt was
    scored with the first one's tokenizer."""
    from curll.evaluate.models import tokenizers

    a, b = _slow_only(checkpoint, tmp_path / "a", 300), _slow_only(checkpoint, tmp_path / "b", 270)
    params = _params([{"order": "joint", "stages": [0], "path": "a", "layout": "curll-hub"},
                      {"order": "joint", "stages": [0], "path": "b", "seed": 1, "layout": "curll-hub"}],
                     tmp_path)  # fmt: skip
    got = tokenizers(params, _unchecked(params), tokenizer=None)
    text = "How many apples does Sam have now?"
    for folder in (a, b):
        assert got[folder][0](text)["input_ids"] == load_tokenizer(folder, "curll-hub")(text)["input_ids"]
    assert len(got[a][0].get_vocab()) == 300 and len(got[b][0].get_vocab()) == 270
