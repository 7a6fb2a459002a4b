"""A registry of specs: the one place a kind of thing is declared (instance types, training orders).

A :class:`Registry` is a dict from a spec's name to the spec, in declaration order (the order
reports and stages follow), with a lookup that names the known entries when a name is unknown
and a :meth:`Registry.register` block that adds a spec made at run time (a test, a plugin) and
forgets it after. It imports nothing of curll, so every layer may use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Protocol, TypeVar


class Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


class Registry(dict[str, T]):
    """Specs by name; ``what`` names the kind in messages ("order", "instance type")."""

    def __init__(self, what: str, specs: Iterable[T]) -> None:
        super().__init__((s.name, s) for s in specs)
        self.what = what

    def names(self) -> tuple[str, ...]:
        return tuple(self)

    def spec(self, name: str) -> T:
        """The spec of ``name``; a KeyError naming the known ones otherwise."""
        try:
            return self[name]
        except KeyError:
            raise KeyError(f"unknown {self.what} {name!r} (known: {', '.join(self)})") from None

    @contextmanager
    def register(self, spec: T) -> Iterator[T]:
        """``spec`` is known inside the block (after the others), then forgotten."""
        if spec.name in self:
            raise ValueError(f"{self.what} {spec.name!r} is already registered")
        self[spec.name] = spec
        try:
            yield spec
        finally:
            self.pop(spec.name, None)
