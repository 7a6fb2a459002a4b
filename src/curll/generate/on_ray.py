"""Run the shards of the generate stage as Ray tasks (``generate.runner: ray``; needs the
``curll[ray]`` extra).

:func:`run_on_ray` starts Ray on this machine (``address=None``) or joins a cluster
(``"auto"``: the one ``ray start --head`` / ``ray start --address`` made), and runs ``work(i)``
for every shard index as one task of ``num_cpus`` CPUs. ``work`` must be picklable (a
module-level function, or a ``functools.partial`` of one) and find the project where it runs:
every node sees the project folder at the same path (a shared file system, as for a Slurm job
array). Each task writes its own shard file and its own request cache (no two processes write
one SQLite file); the caller folds the caches afterwards. A task that fails raises its error
here (a :class:`~curll.errors.CurllError` as itself); the others finish first, so their
answers stay cached.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from curll.errors import CurllError


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise CurllError(
            "generate.runner is ray, but ray is not installed: pip install 'curll[ray]'",
            field="generate.runner",
        ) from None
    return ray


def run_on_ray(
    work: Callable[[int], str], indices: Sequence[int], *, address: str | None, num_cpus: float = 1
) -> list[str]:
    """``work(i)`` for each index as a Ray task; returns their results in index order."""
    ray = _import_ray()
    started = not ray.is_initialized()
    if started:  # workers import curll from the same install (a cluster: the same environment)
        ray.init(address=address, include_dashboard=False)
    try:
        task = ray.remote(num_cpus=num_cpus, max_retries=0)(_in_folder)
        pending = {task.remote(str(Path.cwd()), work, i): i for i in indices}
        results: dict[int, str] = {}
        errors: list[BaseException] = []
        with tqdm(total=len(pending), desc="generate: shards on ray", unit="shard") as bar:
            while pending:
                [ref], _ = ray.wait(list(pending), num_returns=1)
                index = pending.pop(ref)
                try:
                    results[index] = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:
                    errors.append(exc.cause if isinstance(exc.cause, BaseException) else exc)
                bar.update(1)
        if errors:
            first = errors[0]
            if isinstance(first, CurllError):
                raise first
            raise CurllError(f"a generate shard failed on ray: {first}") from first
        return [results[i] for i in indices]
    finally:
        if started:
            ray.shutdown()


def _in_folder(folder: str, work: Callable[[int], str], index: int) -> str:
    os.chdir(folder)  # the params' paths are relative to the project
    return work(index)
