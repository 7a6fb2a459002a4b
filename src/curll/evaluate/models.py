"""The models the evaluate stages score: the train stage's, or checkpoints curll did not train.

:func:`scored_models` lists them. With ``evaluate.checkpoints.models`` empty these are the
folders ``train.out.models/seed-<seed>/<order>/<stages>`` (curll's layout, curll's tokenizer);
otherwise every listed checkpoint (:class:`~curll.config.evaluate.Checkpoint`): a Hugging Face
folder of the Llama architecture with its own tokenizer, asked and scored in its own layout
(:mod:`curll.evaluate.layouts`), named as curll names a run of that order, stages and seed.

:func:`untrained_models` gives the untrained baseline of each seed: curll's ``train.preset``
with curll's tokenizer, or, for checkpoints, the first checkpoint's shape (its ``config.json``)
with random weights of ``train.init`` and that checkpoint's tokenizer and layout: the start
those checkpoints were trained from, as near as their folder tells.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from curll.config import Params
from curll.errors import CurllError, one_line
from curll.train.orders import SavedModel, saved_models, untrained


def scored_models(params: Params, seeds: Sequence[int] | None = None) -> list[SavedModel]:
    """The checkpoints of ``evaluate.checkpoints``, each checked to be a model folder; or else
    the trained models of ``seeds`` (None: every seed). A CurllError when there are none."""
    c = params.evaluate.checkpoints
    if c.models:
        out = []
        for i, m in enumerate(c.models):
            folder = Path(c.dir) / m.path
            why = _linked(Path(c.dir), Path(m.path)) or _not_loadable(folder) or _too_short(folder, params)
            if why:
                raise CurllError(why, file=folder, field=f"evaluate.checkpoints.models.{i}.path")
            out.append(SavedModel(m.name, m.order, tuple(m.stages), m.seed, folder, m.layout))
        return out
    runs = saved_models(params.train.out.models, seeds)
    if not runs:
        seeds_of = f" of seeds {list(seeds)}" if seeds is not None else ""
        raise CurllError(f"no trained models{seeds_of}: run the train stage", file=params.train.out.models)
    return runs


def _linked(root: Path, path: Path) -> str:
    """Why ``root / path`` cannot stand for a checkpoint DVC tracks ("" when it can): a folder on
    the way that is a symbolic link to a folder outside ``root``, since DVC does not follow a link
    and so hashes nothing of that folder: a change inside it would not rerun the evaluation. (A
    link to a folder inside ``root`` is fine: DVC hashes that folder where it lies.)"""
    at, inside = root, root.resolve()
    for part in path.parts:
        at = at / part
        if at.is_symlink() and at.is_dir() and not at.resolve().is_relative_to(inside):
            return (f"{at} is a symbolic link to a folder outside {root}, which DVC does not follow "
                    "(a change inside it would not rerun the evaluation): copy the checkpoint into "
                    f"{root}")  # fmt: skip
    return ""


def _not_loadable(folder: Path) -> str:
    """Why ``folder`` is not a checkpoint curll can score ("" when it is): a model
    :func:`curll.model.hf.unreadable` accepts, with a tokenizer."""
    from curll.model.hf import unreadable

    why = unreadable(folder)
    if why:
        return why
    if not (folder / "tokenizer_config.json").is_file():
        return "no tokenizer_config.json: the checkpoint's own tokenizer is needed"
    return ""


def _too_short(folder: Path, params: Params) -> str:
    """Why the model in ``folder`` cannot hold what evaluate gives it ("" when it can): positions
    past its ``max_position_embeddings`` for a held-out record (``train.context`` tokens) or a
    prompt and its answer (``evaluate.infer.prompt_tokens`` + its ``max_tokens``)."""
    from curll.model.hf import config_of

    infer = params.evaluate.infer
    need = {
        "train.context": params.train.context,
        "evaluate.infer.prompt_tokens + sampling.max_tokens": infer.prompt_tokens + infer.sampling.max_tokens,
    }
    key, longest = max(need.items(), key=lambda kv: kv[1])
    have = config_of(folder).max_positions
    if have < longest:
        return (f"the model holds {have} positions (max_position_embeddings), fewer than {key} = {longest}: "
                "lower it, or leave this checkpoint out")  # fmt: skip
    return ""


#: plain text any usable tokenizer turns into tokens other than its unknown one
PROBE = "The cat sat on the mat."


def _tokenizer_problem(tok: Any, folder: Path, layout: str) -> str:
    """Why a checkpoint's tokenizer cannot score its model ("" when it can): ids past the
    embedding table (the largest id it can give, not its count: a vocabulary may have gaps), no
    end-of-sequence token (every answer is scored up to it), plain text read as nothing (a
    tokenizer.json missing), pieces it reads otherwise alone than joined in curll's layout, no
    character offsets in the authors' (:func:`curll.evaluate.layouts.scoring_problem`). Its chat
    template is not the folder's but its layout's (:func:`curll.evaluate.layouts.load_tokenizer`)."""
    from curll.evaluate.layouts import scoring_problem
    from curll.model.hf import config_of

    vocab = config_of(folder).vocab_size
    largest = max([*tok.get_vocab().values(), *(i for i in tok.all_special_ids if i is not None)])
    if largest >= vocab:
        return f"the tokenizer gives ids up to {largest}, past the model's embedding table of {vocab}"
    if tok.eos_token_id is None:
        return "the tokenizer has no end-of-sequence token"
    ids = tok(PROBE, add_special_tokens=False)["input_ids"]
    if not ids or all(i == tok.unk_token_id for i in ids):
        return f"the tokenizer reads {PROBE!r} as no token but its unknown one (is tokenizer.json missing?)"
    return scoring_problem(tok, layout)


def tokenizers(params: Params, models: Sequence[SavedModel], tokenizer: Any) -> dict[Path, tuple[Any, str]]:
    """Each model folder's (tokenizer, layout): ``tokenizer`` (curll's) in curll's layout for
    curll's models, else the folder's own in its layout, loaded once per distinct files and
    layout (the same object for models that share them). The files compared are every file of
    the folder a tokenizer may be read from, so slow-only tokenizers (``vocab.json``,
    ``merges.txt``, ``tokenizer.model``) that differ are loaded apart."""
    from curll.evaluate.layouts import load_tokenizer

    if not params.evaluate.checkpoints.models:
        return {m.folder: (tokenizer, "curll") for m in models}
    c = params.evaluate.checkpoints
    keys = {Path(c.dir) / cp.path: f"evaluate.checkpoints.models.{i}.path" for i, cp in enumerate(c.models)}
    loaded: dict[tuple[str, bytes], tuple[Any, str]] = {}
    out = {}
    for m in models:
        key = (m.layout, _tokenizer_files(m.folder))
        try:
            if key not in loaded:
                loaded[key] = (load_tokenizer(m.folder, m.layout), m.layout)
            why = _tokenizer_problem(loaded[key][0], m.folder, m.layout)  # each folder: its own table
        except Exception as exc:  # transformers raises several unrelated types for bad files
            why = f"its tokenizer cannot be loaded ({type(exc).__name__}: {one_line(exc, 160)})"
        if why:
            raise CurllError(why, file=m.folder, field=keys.get(m.folder))
        out[m.folder] = loaded[key]
    return out


#: the kinds of file a tokenizer is read from, fast or slow (tokenizer.json, vocab.json,
#: merges.txt, vocab.txt, tokenizer.model, a chat template); weights, a card or a log are none
_TOKENIZER_SUFFIXES = frozenset({".json", ".txt", ".model", ".jinja", ".tiktoken"})
#: files of those kinds that describe the model or its training, not its tokenizer
_NOT_TOKENIZER = frozenset({"config.json", "generation_config.json", "trainer_state.json",
                            "model.safetensors.index.json", "adapter_config.json"})  # fmt: skip


def _tokenizer_files(folder: Path) -> bytes:
    """Name and content of every file directly in ``folder`` a tokenizer may be read from (not
    hidden): the key under which checkpoints share one."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in _TOKENIZER_SUFFIXES
                   and p.name not in _NOT_TOKENIZER and not p.name.startswith("."))  # fmt: skip
    return b"\0".join(p.name.encode() + b"\0" + p.read_bytes() for p in files)


class Untrained(NamedTuple):
    """An untrained baseline: its entry (folder to be filled by the caller), how to build its
    weights, its tokenizer."""

    model: SavedModel
    build: Callable[[], Any]  # () -> CausalLM
    tokenizer: Any


def untrained_models(
    params: Params, seeds: Sequence[int], tokenizer: Any, loaded: Mapping[Path, tuple[Any, str]] | None = None
) -> list[Untrained]:
    """One untrained baseline per seed of ``seeds`` (see the module docstring; its folder is
    left empty: a caller that saves it names one); ``tokenizer``: curll's (used without
    checkpoints); ``loaded``: :func:`tokenizers`' map, whose tokenizer of the first checkpoint
    is then shared (else it is loaded again)."""
    from curll.evaluate.layouts import load_tokenizer
    from curll.model.hf import config_of
    from curll.model.llama import from_seed
    from curll.train.orders import untrained_model

    t = params.train
    c = params.evaluate.checkpoints
    if not c.models:
        return [Untrained(untrained(s, Path()), partial(untrained_model, t, len(tokenizer), s), tokenizer)
                for s in seeds]  # fmt: skip
    first = c.models[0]
    source = Path(c.dir) / first.path
    tok = loaded[source][0] if loaded and source in loaded else load_tokenizer(source, first.layout)
    cfg = config_of(source)
    entry = partial(untrained, folder=Path())
    return [Untrained(entry(s)._replace(layout=first.layout), partial(from_seed, cfg, t.init, s), tok)
            for s in seeds]  # fmt: skip
