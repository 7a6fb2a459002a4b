"""The tokenizer folder the train and evaluate stages load: a missing, truncated or otherwise
unreadable ``tokenizer.json`` is a one-line CurllError naming the file, not a traceback."""

from __future__ import annotations

import pytest

from curll.errors import CurllError
from curll.llm.bpe import train_bpe
from curll.train.tokenizer import load_tokenizer, save_tokenizer


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tok") / "tokenizer"
    save_tokenizer(train_bpe([f"Question {i}? The answer is {i * 7}." for i in range(50)], 320), folder)
    return folder


def test_a_saved_tokenizer_loads(saved):
    tok = load_tokenizer(saved)
    assert tok.convert_tokens_to_ids("<|im_end|>") is not None and len(tok) > 256


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # truncated: a copy cut short, a full disk
        lambda text: "",
        lambda text: '{"version": "1.0", "model": {"type": "nonsense"}}',  # JSON, not a tokenizer
    ],
    ids=["truncated", "empty", "not-a-tokenizer"],
)
def test_a_damaged_tokenizer_json_names_the_file(saved, tmp_path, damage):
    import shutil

    folder = tmp_path / "tokenizer"
    shutil.copytree(saved, folder)
    path = folder / "tokenizer.json"
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(CurllError, match="tokenizer") as err:
        load_tokenizer(folder)
    assert err.value.file == str(path) and "\n" not in str(err.value)


def test_a_missing_tokenizer_names_the_stage_that_makes_it(tmp_path):
    with pytest.raises(CurllError, match="tokenizer stage") as err:
        load_tokenizer(tmp_path / "nope")
    assert err.value.file == str(tmp_path / "nope" / "tokenizer.json")


def test_a_damaged_config_beside_it_names_the_folder(saved, tmp_path):
    import shutil

    folder = tmp_path / "tokenizer"
    shutil.copytree(saved, folder)
    (folder / "tokenizer_config.json").write_text('{"tokenizer_class": ', encoding="utf-8")
    with pytest.raises(CurllError, match="not a loadable tokenizer folder") as err:
        load_tokenizer(folder)
    assert err.value.file == str(folder) and "\n" not in str(err.value)


def test_a_hub_tokenizer_renders_chats_as_training_encodes_them(saved, tmp_path):
    """A hub template that adds a default system turn would put in every prompt of a trained
    model a turn its training text never had: the built tokenizer renders curll's ChatML."""
    import json

    from curll.config.train import TokenizerParams
    from curll.train.data import encode
    from curll.train.tokenizer import build_tokenizer

    hub = load_tokenizer(saved)
    hub.chat_template = ("{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}"
                         "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                         "{% endfor %}")  # fmt: skip
    hub.save_pretrained(tmp_path / "hub")
    p = TokenizerParams.model_validate({"source": "hub", "name": str(tmp_path / "hub"), "vocab_size": 512,
                                        "out": {"dir": "t", "stats": "t.json"}})  # fmt: skip
    tok = build_tokenizer(p, [])
    chat = [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Hello."}]
    [doc] = encode([json.dumps(chat)], tok, loss="assistant")
    assert tok.apply_chat_template(chat, tokenize=False) == tok.decode(doc.tokens)
