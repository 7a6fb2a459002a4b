"""DVC stage ``generate``: every instance type's requests (passages, IR, then CQA and CSQA on the
passages), shard by shard.

``curll generate run`` (the DVC cmd) runs every shard 0..n-1 of ``generate.shards``: in turn
in this process (``generate.runner: local``) or as Ray tasks (``ray``, at
``generate.ray_address``). ``curll generate shard I`` runs shard I alone (a Slurm job array:
one task per index), and ``curll generate fold`` folds the shards' caches afterwards;
``generate_merge`` then joins the shards. Each shard writes
``out.shards/generations-<i>-of-<n>.parquet`` atomically and its answers to a cache file of
its own (:func:`curll.llm.cache.shard_cache`) over the shared ``llm.cache``, read only, so no two processes
ever write one SQLite file; ``run`` folds the shard caches into ``llm.cache`` before and
after its shards, so a rerun finds every answer and asks nothing twice. Locks keep this
safe beside other jobs (:func:`curll.llm.cache.shard_guard`): a fold waits for no shard job
(``run`` leaves the caches of shards still running elsewhere for a later fold; ``fold``
refuses), a second job on one shard and a second ``run`` are refused before asking anything.
A shard whose requests failed in a way that may pass (``llm.failures: stop``) writes nothing
and stops only itself: the other shards run, then the stage fails naming it.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from curll.artifacts import write_table
from curll.config import Params
from curll.errors import CurllError
from curll.generate.shard import generate_shard, shard_path_name, shard_seeds, shard_yields, stale_shards
from curll.generate.tasks import tasks as generation_tasks
from curll.llm.cache import fold_shards, run_guard, shard_guard
from curll.llm.engine import UnsettledError
from curll.llm.factory import engine_from_params, make_task
from curll.llm.locks import BusyError
from curll.schemas import GenerationSchema
from curll.yields import check_yields
from pipeline.tools.console import say


def run(params: Params) -> None:
    p = params.generate
    n = p.shards
    out = Path(p.out.shards)
    if out.is_dir():  # files of an earlier shard count are stale
        for stale in stale_shards(out, n):
            stale.unlink()
    unsettled: list[tuple[int, UnsettledError]] = []
    with run_guard(params.llm.cache):
        _fold_if_idle(params)  # what a killed run or `curll generate shard I` left
        if p.runner == "ray":
            from curll.generate.on_ray import run_on_ray

            for line in run_on_ray(partial(shard, params), range(n), address=p.ray_address):
                say(line)
        else:
            for i in range(n):  # a shard with failures that may pass stops only itself
                try:
                    say(shard(params, i))
                except UnsettledError as exc:
                    unsettled.append((i, exc))
        _fold_if_idle(params)
    if unsettled:
        (i, first), others = unsettled[0], len(unsettled) - 1
        also = f" (and {others} more shard(s) like it)" if others else ""
        raise CurllError(f"shard {i}/{n}{also}: {first.message}", field=first.field)


def fold(params: Params) -> None:
    """Fold every shard cache (of any shard count) into ``llm.cache`` and delete it; a
    CurllError (nothing touched) while a shard job is still running over that cache."""
    try:
        _fold(params)
    except BusyError:
        raise CurllError(_BUSY, file=params.llm.cache) from None


_BUSY = "shard jobs are still running over this cache (their caches are in use); fold after they finish"


def _fold(params: Params) -> None:
    added, folded = fold_shards(params.llm.cache)
    if folded:
        say(f"generate: folded {folded} shard caches into {params.llm.cache} ({added} new answers)")


def _fold_if_idle(params: Params) -> None:
    try:
        _fold(params)
    except BusyError:
        say(f"generate: not folding the shard caches now: {_BUSY}")


def shard(params: Params, index: int) -> str:
    """Run shard ``index``; returns its summary line."""
    p, llm = params.generate, params.llm
    if not 0 <= index < p.shards:
        raise CurllError(f"shard must be in 0..{p.shards - 1}", field="generate.shards")
    seeds = shard_seeds(params.seeds.out.seeds, index, p.shards)  # this shard's only
    tasks = {name: make_task(params, task) for name, task in generation_tasks().items()}
    # verify's checks that a new attempt can fix are asked again here (same thresholds)
    content = params.verify.content.for_profile(llm.use)
    with (
        shard_guard(llm.cache, index, p.shards) as cache,
        engine_from_params(llm, models=params.llm_models, desc="generate", cache=cache) as engine,
    ):
        df = generate_shard(seeds, engine, tasks, shard=index, n=p.shards, pairs=p.pairs, checks=content)
    check_yields(f"generate: shard {index}/{p.shards}", shard_yields(seeds, df), p.min_yield,
                 key="generate.min_yield")  # fmt: skip
    path = Path(p.out.shards) / shard_path_name(index, p.shards)
    write_table(df, path, GenerationSchema)
    ok = int((df["status"] == "ok").sum())
    return (
        f"generate: shard {index}/{p.shards}: {len(df)} requests, {ok} ok, "
        f"{engine.new_requests} sent to the model "
        f"(+{engine.backend_calls - engine.new_requests} retries) -> {path}"
    )
