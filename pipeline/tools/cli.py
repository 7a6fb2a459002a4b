"""The ``curll`` command: every DVC stage, plus the public importers.

``curll STAGE run`` runs one DVC stage from ``params.yaml`` (this is each stage's
``cmd`` in dvc.yaml) and ends with ``STAGE: done in N s`` (its wall time, imports
included; ``STAGE@ITEM`` for a ``foreach`` stage). Other sub-commands are tools a user
calls directly, such as ``curll taxonomy import``. A :class:`CurllError` (bad input, bad params) is printed
as one clear line and exits with status 2; nothing is written in that case.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from curll.config import DEFAULT_PARAMS, Params, load_params
from curll.errors import CurllError
from pipeline.tools import importers
from pipeline.tools.console import fail, say, screen

app = typer.Typer(
    name="curll",
    help="CurLL curriculum datasets and continual-learning experiments, as a DVC pipeline.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

#: DVC stages in data-flow order: name -> one-line help. Each has a module pipeline/<name>.py.
STAGES = {
    "taxonomy": "Skill taxonomy -> indicators table (stage, skill, sub-skill, goal, indicator).",
    "vocab": "Age-of-Acquisition vocabulary -> words per stage.",
    "llm_models": "Make one LLM profile ready: build its model, or check its GGUF (a DVC stage per profile).",
    "skill_graph": "LLM prerequisite edges and weights between indicators -> GraphML/JSON + stats.",
    "templates": "LLM text-type templates per indicator and kind (context / instruction).",
    "seeds": "Seeds: indicator x word x type x template, deterministic.",
    "generate": "LLM passages and IR from seeds, then CQA and CSQA on each passage (sharded).",
    "generate_merge": "Merge generate shards -> generations and a table per instance type.",
    "verify_encoder": "Distil the model2vec sentence encoder used for semantic dedup (offline).",
    "verify": "Filter instances (rejects kept with reasons); dedup, diversity, readability metrics.",
    "split": "LLM quality ratings -> test / validation / train per indicator; decontamination; chat records.",
    "split_release": "Per-stage parquet splits loadable with datasets.load_dataset, plus a dataset card.",
    "tokenizer": "Train the byte-level BPE tokenizer on the train records (or load a hub tokenizer).",
    "train": "Train the models of train.order (independent / joint / continual) for train.stages.",
    "evaluate_infer": "Every trained model (and an untrained one) answers the sampled test items.",
    "evaluate_loss": "Every model's loss on every stage's held-out answers (judge-free; no LLM).",
    "evaluate_judge": "One judge of the panel rates every answer 1-5 (a DVC stage per judge: --judge).",
    "evaluate_panel": "Every judge's ratings in one table; parse failures and agreement between judges.",
    "evaluate": "Stage x stage matrices, CL metrics (AP, FGT, BWT, FWT), figures and the HTML report.",
}

#: ``foreach`` stages (dvc.yaml): name -> (the option naming the item, what an item is)
FOREACH = {
    "llm_models": ("--profile", "profile: an llm.profiles name"),
    "evaluate_judge": ("--judge", "judge: an evaluate.judges name"),
}

ParamsOpt = Annotated[Path, typer.Option("--params", help="params file (DVC's default is params.yaml)")]


def load_checked(path: Path) -> Params:
    """The params file, validated, with every LLM task's token budget checked."""
    from pipeline.tools.budget import check_budgets

    params = load_params(path)
    check_budgets(params, path)
    return params


def _stage_app(name: str, help_text: str) -> typer.Typer:
    sub = typer.Typer(help=help_text, no_args_is_help=True)

    def run_stage(params: Path, *args: str) -> None:
        start = time.perf_counter()
        module = importlib.import_module(f"pipeline.{name}")
        module.run(load_checked(params), *args)
        label = "@".join([name, *args])  # a foreach stage's DVC name: evaluate_judge@<judge>
        say(f"{label}: done in {time.perf_counter() - start:.1f} s")

    if name in FOREACH:  # one DVC stage per item: the command names its item
        option, about = FOREACH[name]

        @sub.command("run", help=f"Run the '{name}' DVC stage for one {about}.")
        def run_item(
            item: str = typer.Option(..., option, help=about),  # a default: annotations are strings here
            params: ParamsOpt = DEFAULT_PARAMS,
        ) -> None:
            run_stage(params, item)
    else:

        @sub.command("run", help=f"Run the '{name}' DVC stage with the params file's '{name}' section.")
        def run(params: ParamsOpt = DEFAULT_PARAMS) -> None:
            run_stage(params)

    app.add_typer(sub, name=name)
    return sub


_SUBAPPS = {name: _stage_app(name, text) for name, text in STAGES.items()}
importers.register(_SUBAPPS)
importers.register_release(app)


@_SUBAPPS["generate"].command(
    "shard", help="Run shard INDEX of generate.shards only (split a run over machines)."
)
def generate_shard(
    index: Annotated[int, typer.Argument(help="0-based shard index")], params: ParamsOpt = DEFAULT_PARAMS
) -> None:
    from pipeline import generate
    from pipeline.tools.console import say

    say(generate.shard(load_checked(params), index))


@_SUBAPPS["generate"].command(
    "fold", help="Fold the request caches of shards run with `generate shard` into llm.cache."
)
def generate_fold(params: ParamsOpt = DEFAULT_PARAMS) -> None:
    from pipeline import generate

    generate.fold(load_checked(params))


metrics_app = typer.Typer(help="Metrics on published results.", no_args_is_help=True)
app.add_typer(metrics_app, name="metrics")


@metrics_app.command("cl", help="AP, forgetting, BWT and FWT of stage x stage score matrices (CSV).")
def metrics_cl(
    continual: Annotated[
        Path, typer.Option("--continual", help="CSV: trained_to,0,1,...; one row per model")
    ],
    out: Annotated[Path, typer.Option("--out", help="JSON to write")],
    independent: Annotated[
        Path | None, typer.Option("--independent", help="same layout, independent models (for FWT)")
    ] = None,
    untrained: Annotated[
        Path | None, typer.Option("--untrained", help="same layout, one row: an untrained model (FWT0)")
    ] = None,
) -> None:
    from curll.artifacts import write_json
    from curll.evaluate.cl import cl_metrics, read_matrix

    missing = [str(p) for p in (continual, independent, untrained) if p is not None and not p.is_file()]
    if missing:
        raise CurllError(f"matrix files not found: {', '.join(missing)}")
    given = [path for path in (continual, independent) if path is not None]
    trained = {path: read_matrix(path, untrained=False) for path in given}  # -1 rows: --untrained only
    base = None
    if untrained:
        rows = read_matrix(untrained)
        if len(rows) != 1:
            raise CurllError(f"{len(rows)} rows: an untrained model's scores are one row", file=untrained)
        base = rows.iloc[0]
    try:
        ind = trained[independent] if independent is not None else None
        result = cl_metrics(trained[continual], independent=ind, untrained=base)
    except ValueError as exc:
        raise CurllError(str(exc), file=continual) from None
    write_json(out, result.to_json())
    say(", ".join(f"{k} {v}" for k, v in result.final().items()) + f" -> {out}")


@app.command(
    "deps", help="Write dvc.yaml's code deps from what each stage imports (pipeline/tools/codedeps.py)."
)
def write_deps(
    dvc_yaml: Annotated[Path, typer.Option("--dvc-yaml", help="the pipeline file")] = Path("dvc.yaml"),
    check: Annotated[
        bool, typer.Option("--check", help="change nothing; exit 1 if any stage's deps differ")
    ] = False,
) -> None:
    from pipeline.tools.codedeps import regenerate

    stale = regenerate(dvc_yaml, write=not check)
    if check and stale:
        fail(f"{dvc_yaml}: code deps differ from the imports in stages {stale}: run `curll deps`")
        raise typer.Exit(1)
    say(f"{dvc_yaml}: " + (f"code deps rewritten in stages {stale}" if stale else "code deps up to date"))


@app.command("results", help="The run's headline (per order: loss, baseline, judge verdict) and identity.")
def show_results(params: ParamsOpt = DEFAULT_PARAMS) -> None:
    """Reads ``evaluate.out.metrics`` and its matrices (the evaluate stage's outputs, paths taken
    from the params file's folder); the table and identity are :mod:`curll.evaluate.headline`'s,
    as in the report's header. A metrics file that is not a JSON object is a CurllError naming it."""
    import json
    from dataclasses import replace

    from curll.evaluate.headline import COLUMNS, UNITS, Identity, headline, identity, rows
    from pipeline.tools.tables import fitted

    out, root = load_params(params).evaluate.out, params.resolve().parent
    root = Path() if root == Path.cwd().resolve() else root  # paths as the user wrote them, from here
    metrics = root / out.metrics
    if not metrics.is_file():
        raise CurllError("no results yet: run `dvc repro` (or `make run`)", file=metrics)
    try:
        values = json.loads(metrics.read_text(encoding="utf-8"))
    except ValueError as exc:  # a UnicodeDecodeError too
        raise CurllError(f"not JSON ({exc}): run `dvc repro` to write it again", file=metrics) from None
    again = "not the results the evaluate stage writes: run `dvc repro` to write it again"
    if not isinstance(values, dict):
        raise CurllError(again, file=metrics)
    try:
        head = headline(values, root / out.matrices)
    except (AttributeError, TypeError, KeyError, ValueError) as exc:  # a section of another shape
        raise CurllError(f"{again} ({type(exc).__name__}: {exc})", file=metrics) from None
    now = identity(params)
    recorded = Identity.of_run(values)
    run = recorded or replace(now, written=None)
    console = screen()
    console.print(run.line())
    if recorded is None:
        console.print(f"{metrics}: no run identity this version reads; the line above is today's")
    elif run.params_hash != now.params_hash:
        console.print(
            f"{params} differs from the params of this run (now {now.params_hash}): `dvc status` says "
            "whether anything is stale"
        )
    console.print(fitted(console, COLUMNS, rows(head)))
    console.print(UNITS)
    for line in (head.gate_line(), head.judge_line()):
        if line:
            console.print(line)


@app.command(
    "experiments", help="DVC experiments side by side: the params that differ, each order's headline."
)
def show_experiments(params: ParamsOpt = DEFAULT_PARAMS) -> None:
    """``dvc exp show --json`` in the params file's folder, laid out by
    :mod:`pipeline.tools.experiments` (a row per experiment and order). A params file that does
    not load still names its headline folder as written (the workspace row is then noted)."""
    from pipeline.tools.experiments import (
        COLUMNS,
        dvc_exp_show,
        experiments,
        headline_folder,
        notes,
        table_rows,
    )
    from pipeline.tools.tables import fitted

    folder, invalid = headline_folder(params)
    found = experiments(dvc_exp_show(params.resolve().parent), folder)
    if not any(r.headline for r in found):
        raise CurllError("no results yet: run `dvc repro` (or `make run`) or `dvc exp run`", file=params)
    lines = table_rows(found)
    console = screen()
    sections = {i for i, row in enumerate(lines) if row[0] and i}
    console.print(fitted(console, COLUMNS, lines, fold={COLUMNS[1]}, sections=sections))
    console.print(
        "nats per answer token; gain: the unigram baseline's NLL minus the model's on its own stage"
    )
    for line in notes(found, params, invalid):
        console.print(line)


@app.command("params", help="Validate a params file and print it as curll reads it (JSON, on stdout).")
def show_params(params: ParamsOpt = DEFAULT_PARAMS) -> None:
    loaded = load_checked(params)
    sys.stdout.write(loaded.model_dump_json(indent=2) + "\n")  # data, not a log line: stdout


def main() -> None:
    """Console entry point: run the app, turning CurllError into a clear message and exit 2, and a
    usage error (an unknown option, a value of the wrong type, a missing argument) into one line
    that names the command's help, with click's status (2)."""
    from typer.exceptions import TyperException

    try:
        code = app(standalone_mode=False, prog_name="curll")
    except CurllError as exc:
        fail(str(exc))
        raise SystemExit(2) from None
    except TyperException as exc:  # click's usage errors, as typer ships click
        if type(exc).__name__ != "NoArgsIsHelpError":  # that one has printed the help already
            ctx = getattr(exc, "ctx", None)
            fail(f"{exc.format_message()} (see {ctx.command_path if ctx else 'curll'} --help)")
        raise SystemExit(exc.exit_code) from None
    except typer.Abort:
        fail("aborted")
        raise SystemExit(1) from None
    raise SystemExit(code if type(code) is int else 0)  # an Exit's code; a command itself returns None


def entry() -> None:
    """The ``curll`` console script: :func:`main`, ended without Python's final teardown
    (:mod:`pipeline.tools.fast_exit`: over a second a stage with torch loaded)."""
    from pipeline.tools.fast_exit import run_then_exit

    run_then_exit(main)


if __name__ == "__main__":
    entry()
