"""A seeded sample of a release's questions, drawn before their text is read.

A record's id is content-free (folder, file, row, pair: :func:`curll.imports.importer.record_id`),
so :func:`draw` needs only each file's row count (and, for ``csqa``, each row's number of pairs:
its list column is the one text column read) to pick which questions a sample holds, and
:func:`read_drawn` then reads only the row groups that hold a drawn row.

Groups are (stage, type, split). Test and validation come from the ``_eval`` repositories, train
from the others' train files; a train repository's val and test files (``stage<N>_instruct``
has them) are set aside, so that an eval question is not counted twice under two ids if
they repeat the eval repositories' rows. Each group
draws ``cap`` plus a tenth more (at least 5 more) with ``numpy.random.default_rng`` seeded with
(seed, stage, type, split) over its questions in folder and file order, so the same folders
give the same sample; :func:`read_drawn` returns them with their rank in the draw, so a
question found empty is replaced by the next drawn. Memory: the picks, and the pair counts of
one group's ``csqa`` files at a time (one ``int64`` a row).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from curll.imports.curll_hub import Triple
from curll.imports.reader import Source
from curll.schemas import SPLITS

#: (stage, type, split)
Group = tuple[int, str, str]
#: a drawn question found: (rank in its group's draw, record in RECORDS order, its (passage,
#: question, answer))
Hit = tuple[int, list[Any], Triple]


@dataclass
class Draw:
    """What to read: per file, row -> [(pair, group, rank in the draw)]; questions per group;
    the files set aside (a train repository's val and test files) with their rows."""

    picks: dict[Path, dict[int, list[tuple[int, Group, int]]]] = field(default_factory=dict)
    available: Counter[Group] = field(default_factory=Counter)
    aside: dict[str, int] = field(default_factory=dict)


def _starts(path: Path, kind: str, batch_rows: int) -> tuple[int, np.ndarray | None]:
    """(questions in a file, the position of each row's first question); the positions are None
    where every row holds one question (all kinds but ``csqa``, whose rows hold a list)."""
    file = pq.ParquetFile(path)
    if kind != "csqa":
        return file.metadata.num_rows, None
    import pyarrow.compute as pc

    def lengths(column: pa.Array) -> np.ndarray:  # a column of nulls only holds no list: 0 each
        if pa.types.is_null(column.type):
            return np.zeros(len(column), dtype=np.int64)
        counts: np.ndarray = pc.list_value_length(column).fill_null(0).to_numpy(zero_copy_only=False)
        return counts

    parts = [lengths(b.column(0)) for b in file.iter_batches(batch_size=batch_rows, columns=["csqa"])]
    pairs = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)
    return int(pairs.sum()), np.cumsum(pairs) - pairs


def draw(
    sources: list[Source], caps: dict[str, int], seed: int, types: list[str], batch_rows: int = 65536
) -> Draw:
    """The seeded draw of the module docstring over opened, stage-named sources; ``types``: every
    record type, in a fixed order (part of each group's seed)."""
    out = Draw()
    files: dict[Group, list[tuple[Path, str]]] = defaultdict(list)
    for source in sources:
        evaluation = source.kind.name.endswith("_eval")
        for path, split in source.files:
            if evaluation == (split == "train"):
                out.aside[f"{source.folder.name}/data/{path.name}"] = pq.ParquetFile(path).metadata.num_rows
                continue
            assert source.stage is not None, "the draw reads stage-named folders"
            files[(source.stage, source.kind.type, split)].append((path, source.kind.name))
    for group, paths in sorted(files.items()):
        stage, kind, split = group
        parts = [(path, *_starts(path, name, batch_rows)) for path, name in paths]
        ends = np.cumsum([n for _, n, _ in parts])
        total = int(ends[-1]) if len(ends) else 0
        out.available[group] = total
        cap = caps[split]
        k = min(total, cap + max(5, cap // 10)) if cap else 0
        rng = np.random.default_rng([seed, stage, types.index(kind), list(SPLITS).index(split)])
        for rank, position in enumerate(rng.choice(total, size=k, replace=False).tolist()):
            f = int(np.searchsorted(ends, position, side="right"))
            path, _, starts = parts[f]
            local = position - (int(ends[f - 1]) if f else 0)
            row = local if starts is None else int(np.searchsorted(starts, local, side="right")) - 1
            pair = 0 if starts is None else local - int(starts[row])
            out.picks.setdefault(path, {}).setdefault(row, []).append((pair, group, rank))
    return out


def read_drawn(
    sources: list[Source], plan: Draw, *, system: str, batch_rows: int
) -> tuple[dict[Group, list[Hit]], Counter[str]]:
    """The drawn rows read and laid out as records: the hits per group, and the drawn questions
    left out per reason (an empty question or answer)."""
    from tqdm.auto import tqdm

    from curll.imports.importer import row_records
    from curll.imports.reader import rows

    found: dict[Group, list[Hit]] = defaultdict(list)
    left_out: Counter[str] = Counter()
    with tqdm(total=sum(len(r) for r in plan.picks.values()), desc="split: import", unit="row") as bar:
        for source in sources:
            for path, split in source.files:
                picks = plan.picks.get(path, {})
                for index, row in rows(path, source.kind, batch_rows=batch_rows, only=sorted(picks)):
                    bar.update()
                    kept, skipped = row_records(source, path, split, index, row, system=system)
                    by_pair, triples = dict(kept), source.kind.triples(row)
                    for pair, group, rank in picks[index]:
                        if pair in by_pair:
                            found[group].append((rank, by_pair[pair], triples[pair]))
                        else:
                            left_out[next((r for q, r in skipped if q in (pair, -1)), "no such pair")] += 1
    return found, left_out
