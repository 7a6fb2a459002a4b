"""DVC stage ``evaluate``: scores -> stage x stage matrices, CL metrics, figures and the report.

Reads ``evaluate.out.items`` (the items asked; those dropped before answering are counted in
``metrics.items.dropped``), ``answers``, ``ratings`` and ``rubric``, the skill-graph edges and
the indicators. Writes ``out.scores`` (one row per item and model: the mean judge score),
``out.metrics`` (per order and type: AP, FGT, BWT, FWT, zero-shot FWT at the last stage and
per stage; the unigram baseline verdict; paired differences between orders; the claims with
Holm-adjusted p-values, the judge's only when ``judges.json`` says the panel passed its
controls; forgetting vs out-degree; answer readability; rubric means of the last models),
``out.matrices`` (CSV per order and type, the layout of ``curll metrics cl``), ``out.plots``
(PNG), ``out.headline`` (the small DVC metrics: :func:`curll.evaluate.headline.metric_files`),
``out.curves`` (``<order>.csv``: ``run,step,loss`` of every model of the order, each seed and
stage a ``run``, from ``train.out.plots``; a DVC plot an order) and ``out.report`` (one
self-contained HTML file, opening with the run's identity and headline).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from curll.artifacts import read_table, records, write_json, write_table
from curll.config import DEFAULT_PARAMS, Params
from curll.errors import CurllError
from curll.evaluate.analysis import out_degree, scores_table
from curll.evaluate.coverage import Gap, gaps
from curll.evaluate.findings import summary
from curll.evaluate.headline import headline, identity, metric_files
from curll.evaluate.judge import item_scores
from curll.evaluate.page import write_html
from curll.evaluate.report import render
from curll.evaluate.results import compute
from curll.schemas import EdgeSchema, IndicatorSchema, instance_schema
from curll.schemas.evaluate import (
    AnswerSchema,
    ItemSchema,
    JudgeRatingSchema,
    LossSchema,
    RubricSchema,
    ScoreSchema,
)
from pipeline.tools.console import say


def run(params: Params) -> None:
    p = params.evaluate
    listed = read_table(p.out.items, ItemSchema)
    items = listed[listed["dropped"] == ""]  # the items the models were asked
    answers = read_table(p.out.answers, AnswerSchema)
    ratings = read_table(p.out.ratings, JudgeRatingSchema)
    indicators = read_table(params.taxonomy.out.indicators, IndicatorSchema)
    edges = read_table(params.skill_graph.out.edges, EdgeSchema)
    judges = json.loads(Path(p.out.judges).read_text(encoding="utf-8"))
    passed = [j for j, ok in judges.get("informative", {}).items() if ok]
    if passed:  # only the judges that passed their controls score the answers
        ratings = ratings[ratings["judge"].isin(passed)]
    scores = scores_table(answers, items, item_scores(ratings))
    rubric = read_table(p.out.rubric, RubricSchema)
    losses = read_table(p.out.losses, LossSchema)
    found = _gaps(params, losses)
    if found and not p.accept_gaps:
        short = "; ".join(map(str, found))
        raise CurllError(
            f"too few test items (fewer than evaluate.min_items={p.min_items}) for a trustworthy matrix: "
            f"{short}; make more (seeds, generation yield) or set evaluate.accept_gaps: true to report them",
            file=params.split.out.records, field="evaluate.min_items",
        )  # fmt: skip
    # written (so validated) before anything is computed from it: the intervals are clipped to its scale
    write_table(scores, p.out.scores, ScoreSchema)
    informative = bool(passed)
    res = compute(scores, items, out_degree(edges, indicators), list(p.types), answers=answers, rubric=rubric,
                  losses=losses, samples=p.bootstrap.samples, seed=p.bootstrap.seed,
                  judge_informative=informative)  # fmt: skip
    t = params.train
    if not p.checkpoints.models:  # checkpoints were trained elsewhere, with compute this run does not know
        res.metrics["compute"] = {"budget": t.budget, "steps_per_stage": t.steps_per_stage or None,
                                  "epochs": t.epochs, "batch": t.batch, "rewarm": t.optim.rewarm,
                                  "replay": t.continual.replay}  # fmt: skip
    keep = ("informative", "sign_test_p", "reference_beats_mismatch", "means", "why")
    res.metrics["judge_controls"] = {
        "panel_informative": informative, "scored_by": passed or list(p.judges),
        "judges": {j: {k: c.get(k) for k in keep} for j, c in judges.get("controls", {}).items()},
    }  # fmt: skip
    res.metrics["items"] = {"asked": len(items), "dropped": _dropped(listed)}
    res.metrics["coverage"] = {
        "min_items": p.min_items,
        "gaps": [{**asdict(g), "why": g.why()} for g in found],
    }
    for g in found:
        say(f"evaluate: warning: {g} (accepted: evaluate.accept_gaps)")
    run = identity(Path(DEFAULT_PARAMS))
    res.metrics["run"] = run.record()  # `curll results` shows the run's, not today's params
    rep = render(res, Path(p.out.matrices), Path(p.out.plots))  # computed once, rendered after
    write_json(p.out.metrics, rep.metrics)
    head = headline(rep.metrics, Path(p.out.matrices))
    _rewrite(Path(p.out.headline))
    for name, values in metric_files(head).items():
        write_json(Path(p.out.headline) / name, values)
    _curves(Path(params.train.out.plots), Path(p.out.curves))
    write_html(rep, judges, Path(p.out.report), "curll evaluation report",
               headline=(head, run))  # fmt: skip
    for line in summary(rep.metrics):
        say(f"evaluate: {line}")
    say(f"evaluate: report {p.out.report}, metrics {p.out.metrics}")


def _gaps(params: Params, losses: pd.DataFrame) -> list[Gap]:
    """The trained stages and evaluated types with too few scored test records, and the counts
    (generated, kept by verify) that say why."""
    test = losses[(losses["split"] == "test") & (losses["tokens"] > 0)].drop_duplicates("record_id")
    n_test = Counter((int(r["stage"]), str(r["type"])) for r in records(test))
    if params.split.source == "import":  # the generation tables do not describe these records
        return gaps(n_test, params.train.stages, params.evaluate.types, params.evaluate.min_items,
                    generated=None, verified=None)  # fmt: skip
    generated: Counter[tuple[int, str]] = Counter()
    verified: Counter[tuple[int, str]] = Counter()
    for kind in params.evaluate.types:
        made, kept = params.generate_merge.out.table(kind), params.verify.out.table(kind)
        for counts, path in ((generated, made), (verified, kept)):
            stages = read_table(path, instance_schema(kind), columns=["stage"])["stage"]
            counts.update((int(s), kind) for s in stages)
    return gaps(n_test, params.train.stages, params.evaluate.types, params.evaluate.min_items,
                generated=generated, verified=verified)  # fmt: skip


def _dropped(items: pd.DataFrame) -> dict[str, dict[str, int]]:
    """reason -> ``stage/type`` -> items dropped before answering."""
    out: dict[str, dict[str, int]] = {}
    for r in records(items[items["dropped"] != ""]):
        per = out.setdefault(str(r["dropped"]), {})
        per[f"{r['stage']}/{r['type']}"] = per.get(f"{r['stage']}/{r['type']}", 0) + 1
    return out


def _rewrite(folder: Path) -> None:
    """An empty ``folder``: no file of an earlier run's orders stays."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)


#: a train plot file: seed-<seed>_<order>_<stages>.csv
_TRAIN_PLOT = re.compile(r"^seed-(?P<seed>\d+)_(?P<order>[a-z][a-z0-9-]*)_(?P<stages>[\d-]+)\.csv$")


def _curves(plots: Path, out: Path) -> None:
    """``out/<order>.csv`` (``run,step,loss``): every train plot file of the order, its ``run``
    ``seed <s> stages <a-b>``, in seed then stage order."""
    _rewrite(out)
    found = sorted((m, f) for f in plots.glob("*.csv") if (m := _key(f.name)))
    by_order: dict[str, list[list[str]]] = {}
    for (order, seed, stages), f in found:
        run = f"seed {seed} stages {stages}"
        with f.open(newline="", encoding="utf-8") as src:
            rows = by_order.setdefault(order, [])
            rows += [[run, r["step"], r["loss"]] for r in csv.DictReader(src)]
    for order, rows in by_order.items():
        with (out / f"{order}.csv").open("w", newline="", encoding="utf-8") as dst:
            csv.writer(dst, lineterminator="\n").writerows([["run", "step", "loss"], *rows])


def _key(name: str) -> tuple[str, int, str] | None:
    m = _TRAIN_PLOT.match(name)
    return (m["order"], int(m["seed"]), m["stages"]) if m else None
