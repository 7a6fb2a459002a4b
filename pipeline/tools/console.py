"""Console output for stages: progress and summaries go to stderr, never to data files."""

from __future__ import annotations

from functools import cache

from rich.console import Console
from rich.markup import escape


@cache
def console() -> Console:
    return Console(stderr=True, highlight=False)


def say(message: str) -> None:
    console().print(escape(message), soft_wrap=True)


def fail(message: str) -> None:
    console().print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
