"""The split stage's tables from the CurLL authors' release (``split.source: import``).

Contract of :func:`imported_files`: opens every repository folder under ``split.imported.dir``
(each named ``stage<N>_<kind>`` as the Hub's client downloads it; :mod:`curll.imports`) and keeps
a seeded sample of at most ``split.imported.<split>`` records per (stage, type, split). The sample
is drawn before any text is read: a record's id is content-free (folder, file, row, pair), so
the draw needs only each file's row count (and, for ``csqa``, each row's number of pairs), and
then only the row groups holding drawn rows are read. A group draws a tenth more than its cap
(at least 5 more), in the draw's order, so a question or answer found empty is replaced; a group
with more empty ones than that keeps fewer. The draw is ``numpy.random.default_rng`` seeded with
(``split.seed``, stage, type, split) over the group's records in folder and file order: the same
folders give the same sample. The release's own splits are kept (its eval repositories are test
and validation, its train repositories train); nothing is rated or decontaminated.

Writes, all or none (a stage of the import with no train or no test records is an error before
anything is renamed into place):

- ``out.records``: the sample (RecordSchema), by (stage, split, type, record id) as split's own;
- ``out.units``: one row per unit of a kept record (its first record's type, stage and
  indicator; rating -1, rank by hash within stage, indicator and type, never contaminated);
- ``out.ratings`` and ``out.rejects``: no rows.

Memory holds the drawn records (about the sum of the caps) and one ``int64`` per row of a
``csqa`` file being counted, never a table's text.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from curll.artifacts import empty_table
from curll.config.verify import SplitParams
from curll.errors import CurllError
from curll.instances import TYPES
from curll.schemas import SPLITS, RatingSchema, RecordSchema, RejectSchema, UnitSchema
from curll.split.core import RecordCounts, record_counts
from curll.streaming import write_table_streams
from curll.yields import YieldError

#: the seeded type a record of each imported type belongs to (a passage or an IR pair)
_UNIT_TYPE = {name: (t.on or name) for name, t in TYPES.items()}
#: (stage, type, split)
Group = tuple[int, str, str]


def repositories(folder: Path) -> list[Path]:
    """The repository folders under ``folder`` (hidden ones and plain files left out), by name;
    a CurllError naming ``folder`` when it is missing or holds none."""
    if not folder.is_dir():
        why = "not a folder: with split.source import, split.imported.dir holds the downloaded repositories"
        raise CurllError(why, file=folder, field="split.imported.dir")
    found = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not found:
        raise CurllError("no repository folder (stage<N>_cqa/, stage<N>_instruct_eval/, ...) to import",
                         file=folder, field="split.imported.dir")  # fmt: skip
    return found


def _key(seed: int, unit_id: str) -> bytes:
    return hashlib.sha256(f"{seed}\x1f{unit_id}".encode()).digest()[:8]


@dataclass
class _Draw:
    """What to read: per file, row -> [(pair, group, rank in the draw)]."""

    picks: dict[Path, dict[int, list[tuple[int, Group, int]]]] = field(default_factory=dict)
    available: Counter[Group] = field(default_factory=Counter)


def _starts(path: Path, kind: Any, batch_rows: int) -> tuple[int, np.ndarray | None]:
    """(questions in a file, the position of each row's first question); the positions are None
    where every row holds one question (all kinds but ``csqa``, whose rows hold a list)."""
    file = pq.ParquetFile(path)
    if kind.name != "csqa":
        return file.metadata.num_rows, None
    import pyarrow.compute as pc

    parts = [pc.list_value_length(b.column(0)).fill_null(0).to_numpy(zero_copy_only=False)
             for b in file.iter_batches(batch_size=batch_rows, columns=["csqa"])]  # fmt: skip
    pairs = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)
    return int(pairs.sum()), np.cumsum(pairs) - pairs


def draw(sources: list[Any], caps: dict[str, int], seed: int, batch_rows: int = 65536) -> _Draw:
    """The seeded draw of the module docstring, over opened sources (:func:`open_source`)."""
    files: dict[Group, list[tuple[Path, int, np.ndarray | None]]] = defaultdict(list)
    for source in sources:
        for path, split in source.files:
            n, starts = _starts(path, source.kind, batch_rows)
            files[(source.stage, source.kind.type, split)].append((path, n, starts))
    out = _Draw()
    types, splits = sorted(TYPES), list(SPLITS)
    for group, parts in sorted(files.items()):
        stage, kind, split = group
        ends = np.cumsum([n for _, n, _ in parts])
        total = int(ends[-1]) if len(ends) else 0
        out.available[group] = total
        cap = caps[split]
        k = min(total, cap + max(5, cap // 10)) if cap else 0
        rng = np.random.default_rng([seed, stage, types.index(kind), splits.index(split)])
        for rank, position in enumerate(rng.choice(total, size=k, replace=False).tolist()):
            f = int(np.searchsorted(ends, position, side="right"))
            path, _, starts = parts[f]
            local = position - (int(ends[f - 1]) if f else 0)
            row = local if starts is None else int(np.searchsorted(starts, local, side="right")) - 1
            pair = 0 if starts is None else local - int(starts[row])
            out.picks.setdefault(path, {}).setdefault(row, []).append((pair, group, rank))
    return out


def units_of(records: pd.DataFrame, seed: int) -> pd.DataFrame:
    """UnitSchema rows for the units of ``records``: see the module docstring."""
    first = records.drop_duplicates("unit_id").copy()
    first["type"] = first["type"].map(_UNIT_TYPE)
    first["key"] = [_key(seed, u) for u in first["unit_id"]]
    first = first.sort_values(["stage", "indicator_id", "type", "key"])
    first["rank"] = first.groupby(["stage", "indicator_id", "type"]).cumcount() + 1
    units = first.assign(rating=-1, contaminated=False, topped_up=False)
    columns = list(UnitSchema.to_schema().columns)
    return units[columns].sort_values("unit_id").reset_index(drop=True)


def imported_files(p: SplitParams, *, batch_rows: int = 8192) -> dict[str, Any]:
    """See the module docstring; returns the stats (records per split and type, per stage and
    split, the sample's caps, each group's records in the release, drawn questions left out)."""
    from tqdm.auto import tqdm

    from curll.imports.importer import RECORDS, row_records
    from curll.imports.reader import open_source, rows

    imp = p.imported
    caps = {"train": imp.train, "validation": imp.validation, "test": imp.test}
    sources = [open_source(folder, None) for folder in repositories(Path(imp.dir))]
    plan = draw(sources, caps, p.seed)
    found: dict[Group, list[tuple[int, list[Any]]]] = defaultdict(list)
    left_out: Counter[str] = Counter()
    with tqdm(total=sum(len(r) for r in plan.picks.values()), desc="split: import", unit="row") as bar:
        for source in sources:
            for path, split in source.files:
                picks = plan.picks.get(path, {})
                for index, row in rows(path, source.kind, batch_rows=batch_rows, only=sorted(picks)):
                    bar.update()
                    kept, skipped = row_records(source, path, split, index, row, system=p.system_prompt)
                    by_pair = dict(kept)
                    for pair, group, rank in picks[index]:
                        if pair in by_pair:
                            found[group].append((rank, by_pair[pair]))
                        else:
                            left_out[next((r for q, r in skipped if q in (pair, -1)), "no such pair")] += 1
    chosen = [rec for group in sorted(found) for _, rec in sorted(found[group])[: caps[group[2]]]]
    kept_records = pd.DataFrame(chosen, columns=RECORDS.names) if chosen else empty_table(RecordSchema)
    kept_records = kept_records.sort_values(["stage", "split", "type", "record_id"]).reset_index(drop=True)
    counts = record_counts(kept_records)
    _require(counts, stages=sorted({g[0] for g in plan.available}))
    units = units_of(kept_records, p.seed)
    tables = [empty_table(RatingSchema), units, kept_records, empty_table(RejectSchema)]
    write_table_streams([
        (p.out.ratings, RatingSchema),
        (p.out.units, UnitSchema),
        (p.out.records, RecordSchema),
        (p.out.rejects, RejectSchema),
    ], [tables])  # fmt: skip
    return {
        "source": "import",
        "sample": {"per_stage_and_type": caps, "seed": p.seed},
        "in_release": {"/".join(map(str, g)): n for g, n in sorted(plan.available.items())},
        "drawn_left_out": dict(sorted(left_out.items())),
        "records": _by(counts, lambda k: (k[1], k[2])),
        "records_per_stage": _by(counts, lambda k: (k[0], k[1])),
    }


def _by(counts: RecordCounts, key: Any) -> dict[str, int]:
    out: Counter[tuple[Any, ...]] = Counter()
    for k, n in counts.items():
        out[key(k)] += n
    return {"/".join(str(x) for x in k): n for k, n in sorted(out.items())}


def _require(counts: RecordCounts, stages: list[int]) -> None:
    """Every imported stage needs train and test records (a release stage with eval folders only,
    or train folders only, cannot be trained and scored)."""
    per: Counter[tuple[int, str]] = Counter()
    for (stage, split, _), n in counts.items():
        per[(stage, split)] += n
    empty = [f"stage {s} {k}" for s in stages for k in ("train", "test") if not per.get((s, k))]
    if empty:
        raise YieldError(f"split: the import has no records for {', '.join(empty)}: add that stage's "
                         "train repositories (stage<N>_cqa, _csqa, _instruct) and _eval ones")  # fmt: skip
