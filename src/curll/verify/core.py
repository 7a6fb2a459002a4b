"""The verify stage's logic: filter the generated instances, then measure what is kept.

Contract of :func:`verify_files`: reads the generate stage's table of every instance type
(:mod:`curll.instances`: context, ir, cqa, csqa) and its generations (for the unparsed
requests) from parquet, a batch at a time; writes the kept tables (same schemas, same row
order) and one rejects table (every dropped row with its reason code and detail,
:mod:`curll.verify.verdict`: the unparsed requests, then each type's drops in table order), all
renamed into place together, or none when anything fails, a yield below ``min_yield``
included; returns the metrics of paper Appendix B:

- ``counts[type]``: rows in, kept, and dropped per reason, with ``in == kept + sum(dropped)``
  (an unparsed CQA/CSQA request counts as the pairs it should have made);
- ``yields[type][stage]``: the same per stage (see :mod:`curll.yields`), with examples;
- ``content[type][stage]``: the share passing each content check (english, seed word, on topic,
  grounded; :mod:`curll.verify.content`) and the share ``degenerate`` (failing: it loops),
  measured on the rows that reach them;
- ``dedup[type][stage]``: share of a stage's seeded instances (passages, IR pairs) that are near-duplicates of
  another in the same stage; ``dedup_pairs[type]["i-j"]``: share of stage j's texts with a
  near-duplicate in stage i (both measured after exact-duplicate removal);
- ``diversity[type][stage]`` and ``diversity_pairs[type]["i-j"]``: 1 / gzip ratio of a seeded
  sample of the kept texts; ``readability[type][stage][metric]``: mean and std of six
  textstat grades on a seeded sample.

The checks and their order are :mod:`curll.verify.screen`'s. "First" (of duplicates) means
first in table order: generate_merge writes by stage, indicator and seed. Two passes over
each table: the first decides (:class:`~curll.verify.screen.Screen`), the second writes.
Memory: a batch, the verdicts, the kept passages' ids, one stage's vectors; texts, vectors
and kept passages wait in a scratch folder.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pandera.pandas as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from curll.artifacts import empty_table
from curll.instances import TYPES, made_on, spec
from curll.schemas import GenerationSchema, RejectSchema, instance_schema, known_indicators
from curll.streaming import check_unique, iter_table, whole_groups, write_table_streams
from curll.verify import filters as flt
from curll.verify.encoder import Encoder
from curll.verify.samples import Measures
from curll.verify.scratch import PassageStore
from curll.verify.screen import Screen, Settings, Topics
from curll.yields import Tally, YieldError, check_yields

_GEN_COLUMNS = ["request_key", "status", "reason", "task", "stage", "indicator_id"]


def verify_files(
    inputs: Mapping[str, str | Path],
    generations: str | Path,
    outputs: Mapping[str, str | Path],
    rejects: str | Path,
    encoder: Encoder,
    settings: Settings,
    *,
    batch_rows: int = 4096,
    texts: Callable[[dict[str, Any]], Mapping[str | Path, str]] | None = None,
) -> dict[str, Any]:
    """See the module docstring; ``inputs`` and ``outputs`` are keyed by instance type (every
    one of :data:`curll.instances.TYPES`). ``texts``: the metrics -> text files (path -> text)
    written with the tables, all or none."""
    for kind in TYPES:
        check_unique(inputs[kind], "instance_id")
    targets: list[tuple[str | Path, type[pa.DataFrameModel]]] = [
        *((outputs[k], instance_schema(k)) for k in TYPES),
        (rejects, RejectSchema),
    ]
    with tempfile.TemporaryDirectory(prefix="curll-verify-") as scratch:
        run = _Run(inputs, generations, encoder, settings, Path(scratch), batch_rows)

        def side() -> Mapping[str | Path, str]:  # after the last chunk: run.metrics is set
            return texts(run.metrics) if texts is not None else {}

        try:
            write_table_streams(targets, run.chunks(), texts=side)
        finally:
            run.passages.close()
    return run.metrics


class _Run:
    def __init__(
        self,
        inputs: Mapping[str, str | Path],
        generations: str | Path,
        encoder: Encoder,
        settings: Settings,
        scratch: Path,
        batch_rows: int,
    ) -> None:
        self.inputs, self.generations, self.settings = inputs, generations, settings
        self.encoder, self.scratch, self.batch_rows = encoder, scratch, batch_rows
        self.topics = Topics(encoder, settings.topics, settings.params.semantic.batch_size)
        self.tally = Tally()
        self.passages = PassageStore(scratch / "passages.sqlite")  # kept passages' texts, by id
        self.kept: dict[str, set[str]] = {}  # a type others are made on -> its kept instances' ids
        self.metrics: dict[str, Any] = {}
        self._parts: dict[str, dict[str, Any]] = {}

    def _batches(self, kind: str, desc: str, *, first: bool = False) -> Iterator[pd.DataFrame]:
        """``kind``'s table a batch at a time; on the ``first`` of its two passes, each batch's
        indicators checked against the taxonomy."""
        path = self.inputs[kind]
        bar = tqdm(total=pq.ParquetFile(path).metadata.num_rows, desc=f"verify: {kind} ({desc})", unit="row")
        with bar:
            for df in iter_table(path, instance_schema(kind), batch_rows=self.batch_rows):
                if first:
                    known_indicators(df, self.settings.topics.keys(), path)
                yield df
                bar.update(len(df))

    def _frames(self, kind: str | None, kept: pd.DataFrame | None, gone: pd.DataFrame) -> list[pd.DataFrame]:
        """One frame per output: ``kept`` at ``kind``'s place, ``gone`` for the rejects."""
        out = [kept if k == kind and kept is not None else empty_table(instance_schema(k)) for k in TYPES]
        return [*out, gone]

    def chunks(self) -> Iterator[list[pd.DataFrame]]:
        """Frames for the outputs: the unparsed requests, then each type's kept rows and drops."""
        qa = self.settings.qa_pairs
        for gens in iter_table(self.generations, GenerationSchema, columns=_GEN_COLUMNS):
            self.tally.expect(zip(gens["stage"].tolist(), gens["task"].tolist(), strict=True))
            bad = flt.unparsed(gens)
            self.tally.add(_units(bad, weight=[qa.get(t, 1) for t in bad["type"]]))
            yield self._frames(None, None, bad)
        for kind in TYPES:
            screen, part = self._screen(kind)
            yield from self._write(kind, screen, part)
        yields = self.tally.result()
        check_yields("verify", yields, self.settings.params.min_yield, key="verify.min_yield")
        _kept_some(yields, self.generations)
        self.metrics = _metrics(yields, self._parts)

    def _screen(self, kind: str) -> tuple[Screen, dict[str, Any]]:
        """The first pass over ``kind``: its verdict, and its dedup metrics (seeded types:
        passages, IR)."""
        screen = Screen(kind, self.settings, self.encoder, self.topics, self.scratch, self.inputs[kind])
        t = spec(kind)
        if t.on:
            for df in whole_groups(self._batches(kind, "checks", first=True), t.link):
                passages = self.passages.get(df[t.link]) if t.grounded else {}
                screen.add_pairs(df, self.kept.get(t.on, set()), passages)
            return screen, {}
        for df in self._batches(kind, "checks", first=True):
            screen.add(df)
        dedup, pairs = screen.semantic()
        return screen, {"dedup": dedup, "dedup_pairs": pairs}

    def _write(self, kind: str, screen: Screen, part: dict[str, Any]) -> Iterator[list[pd.DataFrame]]:
        """The second pass: kept rows and drops of ``kind``, sampled and counted on the way."""
        measures = Measures(screen.kept_per_stage(), self.settings.params)
        for df in self._batches(kind, "write"):
            kept, gone = flt.drop(df, kind, screen.verdict)
            measures.add(kept["stage"].to_numpy(), flt.texts_of(kind, kept))
            self.tally.add(_units(gone))
            self.tally.add(pd.DataFrame({"stage": kept["stage"], "type": kind, "kept": True, "reason": ""}))
            if made_on(kind):  # a passage: its pairs come next, checked against it
                self.passages.add(kept["instance_id"], kept[spec(kind).reply])
                self.kept.setdefault(kind, set()).update(kept["instance_id"])
            yield self._frames(kind, kept, gone)
        self._parts[kind] = {"content": screen.rates.result(), **measures.result(kind), **part}


def _kept_some(yields: Mapping[str, Mapping[str, Mapping[str, Any]]], generations: str | Path) -> None:
    """A YieldError when no instance at all was kept, whatever ``verify.min_yield`` allows: with
    the generate tables empty, or the commonest reasons the instances were dropped."""
    groups = [g for by_stage in yields.values() for g in by_stage.values()]
    if any(g["kept"] for g in groups):
        return
    read = sum(g["in"] for g in groups)
    if not read:
        raise YieldError("verify: the generate tables hold no instance: nothing to keep", file=generations)
    why: Counter[str] = Counter()
    for g in groups:
        why.update(g["reasons"])
    top = ", ".join(f"{code} {n}" for code, n in why.most_common(3))
    raise YieldError(f"verify: kept none of the {read} instances read ({top})")


def _units(rejects: pd.DataFrame, weight: Any = 1) -> pd.DataFrame:
    """Yield units (see :mod:`curll.yields`) of reject rows, their code and detail as they are (an
    unparsed QA request weighs as many pairs as it should have made)."""
    columns = {c: rejects[c] for c in ("stage", "type", "reason", "detail")}
    return pd.DataFrame({**columns, "kept": False, "weight": weight})


def _metrics(yields: dict[str, Any], parts: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    counts: dict[str, Any] = {}
    for kind in TYPES:
        per_stage = list(yields.get(kind, {}).values())
        dropped: dict[str, int] = {}
        for g in per_stage:
            for code, n in g["reasons"].items():
                dropped[code] = dropped.get(code, 0) + n
        counts[kind] = {
            "in": sum(g["in"] for g in per_stage),
            "kept": sum(g["kept"] for g in per_stage),
            "dropped": dict(sorted(dropped.items())),
        }
    out: dict[str, Any] = {"counts": counts, "yields": yields}
    sections = ("content", "dedup", "dedup_pairs", "diversity", "diversity_pairs", "readability")
    for section in sections:  # dedup: passages and IR only (QA pairs are checked within a passage)
        out[section] = {kind: parts[kind][section] for kind in TYPES if section in parts[kind]}
    return out


def plot_tables(metrics: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Per-stage trends for DVC plots: diversity, dedup and Flesch-Kincaid grade by type."""

    def frame(section: dict[str, dict[str, Any]], pick: Any = lambda v: v) -> pd.DataFrame:
        stages = sorted({int(s) for per in section.values() for s in per})
        return pd.DataFrame(
            {"stage": stages, **{k: [pick(per.get(str(s))) for s in stages] for k, per in section.items()}}
        )

    def fk(v: Any) -> Any:
        return None if v is None else v["flesch_kincaid"]["mean"]

    return {
        "diversity": frame(metrics["diversity"]),
        "dedup": frame(metrics["dedup"]),
        "readability": frame(metrics["readability"], fk),
    }
