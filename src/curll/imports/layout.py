"""Which files of a downloaded repository folder hold its rows, or why the folder is refused.

A Hub dataset pushed by ``datasets`` keeps its rows in ``data/<split>-NNNNN-of-NNNNN.parquet``
and may say so in its card (``README.md``: ``configs:`` / ``data_files:`` in the YAML front
matter). :func:`data_files` returns those files, each with its split as the file names it, and
refuses, naming the file, whatever holds rows curll would not read, so that no rows are left out
unsaid:

- any file under ``data/`` that is not such a shard (another format, a compressed file, a folder
  under ``data/``, a name in another case);
- a table file anywhere else in the folder (``train.parquet`` at the top, a parquet-converter
  ``default/train/0000.parquet``, ``val.jsonl.gz``, ``train.json``): the metadata the Hub's
  tools write (:data:`METADATA`) is not one;
- a card whose ``configs:`` reads a path other than ``data/<split>-*``, or leaves out a split
  whose shards ``data/`` holds (files the Hub would not show: a leftover of another revision);
- ``val`` and ``validation`` shards side by side (one split of curll's, named twice).

Hidden files and folders (``.cache/huggingface``, ``.git``, ``.DS_Store``) are never read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from curll.errors import CurllError
from curll.imports.curll_hub import DATA_FILE, SPLIT_NAMES

#: a file holding table rows, whatever compression follows (``val.jsonl.gz``)
TABLE_SUFFIXES = frozenset({".parquet", ".arrow", ".feather", ".jsonl", ".ndjson", ".csv", ".tsv", ".json"})
#: the JSON files the Hub's tools write beside the data: metadata, not rows
METADATA = frozenset({"dataset_infos.json", "dataset_info.json", "dataset_dict.json", "state.json"})
SHARDS = "data/<split>-NNNNN-of-NNNNN.parquet"


def _visible(folder: Path) -> list[Path]:
    """The folder's files but hidden ones and those in hidden folders (``.DS_Store``,
    ``.gitkeep``, ``.cache/``), sorted."""
    return sorted(p for p in folder.rglob("*") if p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts))  # fmt: skip


def _card_paths(folder: Path) -> list[tuple[str, str]]:
    """(split, path pattern) of every ``data_files`` entry of the card's ``configs:`` (none without
    a card or a ``configs:`` key): a list of {split, path} or a mapping of split to path(s); a
    bare path or list of paths is the ``train`` split."""
    import yaml  # as the Hub's own client reads a card

    card = folder / "README.md"
    lines = card.read_text(encoding="utf-8", errors="replace").splitlines() if card.is_file() else []
    if not lines or lines[0].strip() != "---":
        return []
    ends = [i for i, line in enumerate(lines[1:], start=1) if line.strip() == "---"]  # a line of its own
    front = "\n".join(lines[1 : ends[0]]) if ends else ""
    try:
        meta: Any = yaml.safe_load(front)
    except yaml.YAMLError:
        raise CurllError("the card's front matter is not YAML", file=card) from None
    found: list[tuple[str, str]] = []
    for config in (meta or {}).get("configs") or [] if isinstance(meta, dict) else []:
        files = config.get("data_files") if isinstance(config, dict) else None
        if isinstance(files, dict):  # {split: path or paths}, the other way a card may write it
            files = [{"split": k, "path": v} for k, v in files.items()]
        entries = files if isinstance(files, list) else [files] if files is not None else []
        for entry in entries:
            split, paths = ((entry.get("split", "train"), entry.get("path")) if isinstance(entry, dict)
                            else ("train", entry))  # fmt: skip
            for path in paths if isinstance(paths, list) else [paths]:
                found.append((str(split), str(path)))
    return found


def data_files(folder: Path) -> list[tuple[Path, re.Match[str]]]:
    """The shards of ``folder`` with their file-name match (``split``, ``index``, ``total``);
    a CurllError names the first file or card entry that breaks the module's rules."""
    data = folder / "data"
    shards = []
    for path in _visible(folder):
        inside = path.parent == data
        m = DATA_FILE.match(path.name) if inside else None
        if m is not None and m["split"] in SPLIT_NAMES:
            shards.append((path, m))
        elif data in path.parents:
            raise CurllError(f"not a data file curll reads (only {SHARDS} is, split {'|'.join(SPLIT_NAMES)}; "
                             "another format, name or folder would leave its rows out): move it out",
                             file=path)  # fmt: skip
        elif TABLE_SUFFIXES & {s.lower() for s in path.suffixes} and path.name.lower() not in METADATA:
            raise CurllError(f"a table file outside data/, which curll does not read (only {SHARDS} is): "
                             "move it out", file=path)  # fmt: skip
    card = _card_paths(folder)
    for split, pattern in card:
        if not re.fullmatch(rf"data/{re.escape(split)}-[^/]*", pattern):
            raise CurllError(f"the card's configs read {pattern!r} as {split}: curll reads {SHARDS} only",
                             file=folder / "README.md")  # fmt: skip
    listed = {split for split, _ in card}
    named: dict[str, str] = {}
    for path, m in shards:
        if card and m["split"] not in listed:
            raise CurllError(f"not in the card's configs ({', '.join(sorted(listed))}): the Hub would not "
                             "show it (a leftover of another revision?)", file=path)  # fmt: skip
        other = named.setdefault(SPLIT_NAMES[m["split"]], m["split"])
        if other != m["split"]:
            raise CurllError(f"{other} and {m['split']} files side by side: both are curll's "
                             f"{SPLIT_NAMES[other]}: keep one", file=path)  # fmt: skip
    return shards
