"""The split stage's tables from the CurLL authors' release (``split.source: import``).

Contract of :func:`imported_files`: opens every repository folder under ``split.imported.dir``
(each named ``stage<N>_<kind>`` as the Hub's client downloads it; :mod:`curll.imports`) and keeps
a seeded sample of at most ``split.imported.<split>`` records per (stage, type, split), drawn
before the text is read (:mod:`curll.imports.sample`: test and validation from the ``_eval``
repositories, train from the others' train files). Nothing is rated. A drawn train unit whose
text (:func:`unit_texts`: its passage and questions; an IR unit's pairs) shares at least
``split.decontamination.threshold`` of its word n-grams with a kept test or validation unit's
is dropped, as split drops its own (:mod:`curll.split.decontam`; the release's validation is
kept as released, not checked against its test), and the questions drawn next fill its group's
cap while the draw's spare lasts.

Every stage of ``stages`` (``train.stages``) must get train records and test records of every
type of ``types`` (``evaluate.types``): otherwise a YieldError naming the stage, type and the
repository to add, before anything is written. Writes, all or none:

- ``out.records``: the sample (RecordSchema), by (stage, split, type, record id) as split's own,
  and one ``context`` record per unit of the kept CQA and CSQA questions, its passage as the
  assistant turn (:func:`passage_records`; on top of the caps);
- ``out.units``: one row per unit of a kept record or a dropped one (its first record's type,
  stage and indicator; rating -1, rank by hash within stage, indicator and type);
- ``out.rejects``: a ``contaminated`` row per dropped train unit (one met in the draw's order
  before its group's cap was filled), naming the held-out unit it overlaps; ``out.ratings``: no rows;
- ``out.stats``: what :func:`imported_files` returns.

Memory holds the drawn records (about the sum of the caps), never a whole table.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from curll.artifacts import empty_table, json_text
from curll.config.verify import SplitParams
from curll.draws import seeded_key
from curll.errors import CurllError
from curll.instances import TYPES
from curll.schemas import RatingSchema, RecordSchema, RejectSchema, UnitSchema
from curll.schemas.quality import RECORD_ORDER
from curll.split.core import RecordCounts, record_counts, record_stats
from curll.split.decontam import Contamination, contaminated
from curll.streaming import write_table_streams
from curll.yields import YieldError

if TYPE_CHECKING:
    from curll.imports.sample import Group, Hit

#: the seeded type a record of each imported type belongs to (a passage or an IR pair)
_UNIT_TYPE = {name: (t.on or name) for name, t in TYPES.items()}
#: the user turn of an imported passage's record (the release does not keep what asked for it)
PASSAGE_REQUEST = "Write a short text for a child to read."


def repositories(folder: Path) -> list[Path]:
    """The repository folders under ``folder`` (hidden ones and plain files left out), by name,
    each named ``stage<N>_<kind>``; a CurllError naming the folder or key otherwise."""
    from curll.imports.curll_hub import FOLDER, REFUSED

    if not folder.is_dir():
        why = "not a folder: with split.source import, split.imported.dir holds the downloaded repositories"
        raise CurllError(why, file=folder, field="split.imported.dir")
    found = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not found:
        raise CurllError("no repository folder (stage<N>_cqa/, stage<N>_instruct_eval/, ...) to import",
                         file=folder, field="split.imported.dir")  # fmt: skip
    for path in found:
        if not FOLDER.match(path.name) and not REFUSED.match(path.name):  # REFUSED: named by open_source
            raise CurllError("not named as its Hub repository (stage<N>_<kind>, kind cqa, csqa, instruct "
                             "or one of them with _eval): rename it", file=path)  # fmt: skip
    return found


def units_of(records: pd.DataFrame, seed: int) -> pd.DataFrame:
    """UnitSchema rows for the units of ``records``: see the module docstring."""
    first = records.drop_duplicates("unit_id").copy()
    first["type"] = first["type"].map(_UNIT_TYPE)
    first["key"] = [seeded_key(seed, u) for u in first["unit_id"]]
    first = first.sort_values(["stage", "indicator_id", "type", "key"])
    first["rank"] = first.groupby(["stage", "indicator_id", "type"]).cumcount() + 1
    units = first.assign(rating=-1, contaminated=False, topped_up=False)
    columns = list(UnitSchema.to_schema().columns)
    return units[columns].sort_values("unit_id").reset_index(drop=True)


def imported_files(
    p: SplitParams, *, stages: Sequence[int], types: Sequence[str], batch_rows: int = 8192
) -> dict[str, Any]:
    """See the module docstring; returns the stats (records per split and type, per stage and
    split, the sample's caps, each group's questions in the release, the files set aside, the
    drawn questions left out per reason, the train units dropped as contaminated)."""
    from curll.imports.reader import open_source
    from curll.imports.sample import draw, read_drawn

    imp = p.imported
    caps = {"train": imp.train, "validation": imp.validation, "test": imp.test}
    sources = [open_source(folder, None) for folder in repositories(Path(imp.dir))]
    plan = draw(sources, caps, p.seed, list(TYPES))
    found, left_out = read_drawn(sources, plan, system=p.system_prompt, batch_rows=batch_rows)
    chosen, gone = decontaminate(found, caps, p)
    rows = [record for _, record, _ in chosen] + passage_records(chosen, p.system_prompt)
    kept = _frame(rows)
    counts = record_counts(kept)
    require(counts, stages, types)
    dropped = _frame([hit[1] for _, hit in gone.values()])
    units = units_of(pd.concat([kept, dropped], ignore_index=True), p.seed)
    units["contaminated"] = units["unit_id"].isin(set(gone))
    rejects = _rejects(gone, dict(zip(kept["unit_id"], kept["split"], strict=True)))
    tables = [empty_table(RatingSchema), units, kept, rejects]
    stats = {
        "source": "import",
        "repositories": sorted(source.folder.name for source in sources),
        "sample": {"per_stage_and_type": caps, "seed": p.seed},
        "in_release": {"/".join(map(str, g)): n for g, n in sorted(plan.available.items())},
        "set_aside": plan.aside,
        "drawn_left_out": dict(sorted(left_out.items())),
        "contaminated": len(gone),
        **record_stats(counts),
    }
    write_table_streams([
        (p.out.ratings, RatingSchema),
        (p.out.units, UnitSchema),
        (p.out.records, RecordSchema),
        (p.out.rejects, RejectSchema),
    ], [tables], texts=lambda: {p.out.stats: json_text(stats)})  # fmt: skip
    return stats


def _frame(rows: list[list[Any]]) -> pd.DataFrame:
    from curll.imports.importer import RECORDS

    if not rows:
        return empty_table(RecordSchema)
    df = pd.DataFrame(rows, columns=RECORDS.names)
    return df.sort_values(list(RECORD_ORDER)).reset_index(drop=True)


def unit_texts(hits: Sequence[Hit]) -> dict[str, str]:
    """Each unit of ``hits`` -> the text decontamination compares, laid out as split lays out its
    own units (:func:`curll.split.units.unit_content`): a passage with a numbered block of the
    questions and answers of ``hits`` asked on it; an IR unit's pairs (an eval ``id`` may hold
    several), each as the ``ir`` unit layout, one after another."""
    from curll.imports.importer import RECORDS
    from curll.split.units import unit_content

    names = RECORDS.names
    by_unit: dict[str, list[Hit]] = {}
    for hit in sorted(hits):
        by_unit.setdefault(hit[1][names.index("unit_id")], []).append(hit)
    out = {}
    for unit, group in by_unit.items():
        kind = group[0][1][names.index("type")]
        if TYPES[kind].on:
            pairs = [(q, a) for _, _, (_, q, a) in group]
            out[unit] = unit_content(_UNIT_TYPE[kind], {"text": group[0][2][0]}, {kind: pairs})
        else:
            fields = [{"instruction": q, "response": a} for _, _, (_, q, a) in group]
            out[unit] = "\n\n".join(unit_content(kind, f, {}) for f in fields)
    return out


def decontaminate(
    found: dict[Group, list[Hit]], caps: dict[str, int], p: SplitParams
) -> tuple[list[Hit], dict[str, tuple[Contamination, Hit]]]:
    """The hits kept, by group and rank (test and validation: the first ``cap`` drawn; train: the
    first ``cap`` whose unit is not contaminated by a kept test or validation unit), and each
    contaminated train unit met before its group's cap was reached -> (its worst overlap, its
    first hit). A unit's
    text is that of :func:`unit_texts` over the kept held-out hits and over every drawn train hit."""
    from curll.imports.importer import RECORDS

    unit = RECORDS.names.index("unit_id")
    held = {g: sorted(hits)[: caps[g[2]]] for g, hits in found.items() if g[2] != "train"}
    test = unit_texts([h for hits in held.values() for h in hits])  # test and validation
    train = {g: sorted(hits) for g, hits in found.items() if g[2] == "train"}
    texts = unit_texts([h for hits in train.values() for h in hits])
    bad = {c.train_id: c for c in contaminated(texts, test, n=p.decontamination.ngram,
                                               threshold=p.decontamination.threshold)}  # fmt: skip
    gone: dict[str, tuple[Contamination, Hit]] = {}
    for g, hits in train.items():
        held[g] = []
        for h in hits:
            if len(held[g]) == caps["train"]:
                break
            if h[1][unit] in bad:
                gone.setdefault(h[1][unit], (bad[h[1][unit]], h))
            else:
                held[g].append(h)
    return [h for g in sorted(held) for h in held[g]], gone


def _rejects(gone: dict[str, tuple[Contamination, Hit]], split_of: dict[str, str]) -> pd.DataFrame:
    """RejectSchema rows of the contaminated train units (the unit's type, id, stage, indicator;
    the detail names the held-out unit's split from ``split_of``, unit id -> split)."""
    from curll.imports.importer import RECORDS
    from curll.verify.filters import reject_frame

    names = RECORDS.names
    first = [(u, c, r) for u, (c, (_, r, _)) in sorted(gone.items())]
    return reject_frame({
        "type": [_UNIT_TYPE[r[names.index("type")]] for _, _, r in first],
        "id": [u for u, _, _ in first],
        "stage": [r[names.index("stage")] for _, _, r in first],
        "indicator_id": [r[names.index("indicator_id")] for _, _, r in first],
        "reason": ["contaminated"] * len(first),
        "detail": [f"overlap {c.overlap:.2f} with {split_of[c.test_id]} {c.test_id}" for _, c, _ in first],
    })  # fmt: skip


def passage_records(hits: list[Hit], system: str) -> list[list[Any]]:
    """One record of type ``context`` per unit of the questions asked on a passage (``hits``:
    :data:`curll.imports.sample.Hit`): the passage as its assistant turn (as curll's own records
    hold their passages), in the unit's split, with its first question's stage and indicator."""
    from curll.chat import record_chat
    from curll.imports.importer import RECORDS

    out: dict[str, list[Any]] = {}
    for _, record, (passage, _, _) in hits:
        r = dict(zip(RECORDS.names, record, strict=True))
        on, unit = TYPES[r["type"]].on, r["unit_id"]
        if on and unit not in out:
            r["record_id"] = hashlib.sha256(f"passage\x1f{unit}".encode()).hexdigest()[:16]
            r["type"], r["messages"] = on, record_chat(system, PASSAGE_REQUEST, passage)
            out[unit] = list(r.values())
    return list(out.values())


def require(counts: RecordCounts, stages: Sequence[int], types: Sequence[str]) -> None:
    """Each of ``stages`` needs train records and test records of each of ``types``; else a
    YieldError naming them and the repositories to add (or the params key to change)."""
    from curll.imports.curll_hub import KINDS

    train: Counter[int] = Counter()
    test: set[tuple[int, str]] = set()
    for (stage, split, kind), n in counts.items():
        if split == "train" and n:
            train[stage] += n
        if split == "test" and n:
            test.add((stage, kind))
    missing = [f"stage {s} train records (stage{s}_cqa, _csqa or _instruct)" for s in stages if not train[s]]
    evals = {k.type: k.name for k in KINDS.values() if k.name.endswith("_eval")}  # a type -> its repository
    missing += [f"stage {s} {t} test records (stage{s}_{evals.get(t, t + '_eval')})"
                for s in stages for t in types if (s, t) not in test]  # fmt: skip
    if missing:
        why = "split: the import has no " + "; no ".join(missing)
        raise YieldError(f"{why}: download those repositories into split.imported.dir, or leave the stage "
                         "out of train.stages or the type out of evaluate.types")  # fmt: skip
