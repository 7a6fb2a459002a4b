"""Console output for stages: progress and summaries go to stderr, never to data files."""

from __future__ import annotations

import sys
from functools import cache

from rich.console import Console
from rich.markup import escape


@cache
def console() -> Console:
    return Console(stderr=True, highlight=False)


def screen() -> Console:
    """A console for tables on stdout: as wide as the terminal on a terminal, 120 columns into
    a pipe or a file. Decided by stdout itself, not by rich's guess: with ``FORCE_COLOR`` set,
    rich takes a pipe for an 80-column terminal and wraps cells that fit 120."""
    return Console() if sys.stdout.isatty() else Console(width=120)


def say(message: str) -> None:
    console().print(escape(message), soft_wrap=True)


def fail(message: str) -> None:
    console().print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
