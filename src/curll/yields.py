"""Yield checks: a stage that keeps too little stops with its reasons instead of exiting 0.

A stage describes what it did as one row per unit (a request, an instance, a rating):
its curriculum ``stage``, its ``type`` (context, ir, cqa, csqa, a template kind, a judge),
whether it was ``kept``, and the ``reason`` when not: ``"code: detail"``, or the code alone
when the units carry a ``detail`` column (verify's drops, :mod:`curll.verify.verdict`,
whose code and detail are never joined). Units may carry a ``weight`` (a rejected CQA
request stands for its ``generate.pairs.cqa`` pairs). :func:`measure` turns that
into yields per type and stage; :func:`check_yields` raises :class:`YieldError` when any
(stage, type) group falls below its floor, naming the stage, each low group's yield and
its most common reasons with an example, e.g.::

    verify: too little kept (verify.min_yield):
      stage 2 context: 0 of 12 kept (0.0%, minimum 20%); words 12 (e.g. '31 not in [40, 250]')

A group expected but absent (no unit at all) has yield 0. An error, never a warning: a
pipeline that trains on nothing and reports metrics on nothing is worse than a stop.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from curll.errors import CurllError

TOP_REASONS = 3


class YieldError(CurllError):
    """A stage kept less than its params allow; the message has the yields and the reasons."""


def floor_for(minimum: float | Mapping[str, float], kind: str) -> float:
    """The floor of ``kind``: one number for every type, or a mapping by type (missing: 0)."""
    if isinstance(minimum, Mapping):
        return float(minimum.get(kind, 0.0))
    return float(minimum)


def unit_frame(
    stage: Iterable[int], kind: str | Iterable[str], kept: Iterable[bool], reason: Iterable[str]
) -> pd.DataFrame:
    """The units :func:`measure` reads, one row each (``kind``: one type for all, or one a unit)."""
    return pd.DataFrame({"stage": list(stage), "type": kind if isinstance(kind, str) else list(kind),
                         "kept": list(kept), "reason": list(reason)})  # fmt: skip


class Tally:
    """:func:`measure` a batch of units at a time (a stage that streams its rows)."""

    def __init__(self, expected: Iterable[tuple[int, str]] = ()) -> None:
        self._groups: dict[tuple[int, str], dict[str, Any]] = {}
        self.expect(expected)

    def _group(self, stage: int, kind: str) -> dict[str, Any]:
        new = {"in": 0, "kept": 0, "reasons": Counter(), "examples": {}}
        return self._groups.setdefault((int(stage), str(kind)), new)

    def expect(self, groups: Iterable[tuple[int, str]]) -> None:
        """Groups to report even when no unit reaches them (their yield is then 0)."""
        for stage, kind in groups:
            self._group(stage, kind)

    def add(self, units: pd.DataFrame) -> None:
        weights = units["weight"] if "weight" in units else pd.Series(1, index=units.index)
        details = units["detail"] if "detail" in units else [None] * len(units)
        for stage, kind, kept, reason, given, w in zip(
            units["stage"], units["type"], units["kept"], units["reason"], details, weights, strict=True
        ):
            g = self._group(stage, kind)
            g["in"] += int(w)
            if kept:
                g["kept"] += int(w)
            else:
                if given is None:
                    code, _, detail = str(reason).partition(":")
                else:
                    code, detail = str(reason), str(given)
                code = code.strip() or "unknown"
                g["reasons"][code] += int(w)
                g["examples"].setdefault(code, detail.strip()[:80])

    def result(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for (stage, kind), g in sorted(self._groups.items()):
            out.setdefault(kind, {})[str(stage)] = {
                "in": g["in"],
                "kept": g["kept"],
                "yield": round(g["kept"] / g["in"], 6) if g["in"] else 0.0,
                "reasons": dict(g["reasons"].most_common()),
                "examples": g["examples"],
            }
        return out


def measure(units: pd.DataFrame, expected: Iterable[tuple[int, str]] = ()) -> dict[str, dict[str, Any]]:
    """{type: {stage: {"in", "kept", "yield", "reasons": {code: count}, "examples": {code: detail}}}}.

    ``units`` has columns stage, type, kept (bool), reason, and optionally weight (default 1)
    and detail (then reason is the code alone)."""
    tally = Tally(expected)
    tally.add(units)
    return tally.result()


def check_yields(
    stage_name: str,
    yields: Mapping[str, Mapping[str, Mapping[str, Any]]],
    minimum: float | Mapping[str, float],
    *,
    key: str,
) -> None:
    """Raise :class:`YieldError` when a (stage, type) group of ``yields`` (see :func:`measure`)
    is below its floor; ``key`` is the params key of the floors (named in the message)."""
    low = []
    for kind, by_stage in yields.items():
        floor = floor_for(minimum, kind)
        for stage, g in by_stage.items():
            if g["yield"] < floor or (g["in"] == 0 and floor > 0):
                reasons = "; ".join(
                    f"{code} {n}" + (f" (e.g. {g['examples'][code]!r})" if g["examples"].get(code) else "")
                    for code, n in list(g["reasons"].items())[:TOP_REASONS]
                )
                low.append(
                    f"  stage {stage} {kind}: {g['kept']} of {g['in']} kept "
                    f"({g['yield']:.1%}, minimum {floor:.0%})" + (f"; {reasons}" if reasons else "")
                )
    if low:
        raise YieldError(f"{stage_name}: too little kept ({key}):\n" + "\n".join(low), field=key)


def public(yields: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """The yields for a metrics file: in, kept, yield and reasons (no example texts)."""
    return {
        kind: {s: {k: v for k, v in g.items() if k != "examples"} for s, g in by_stage.items()}
        for kind, by_stage in yields.items()
    }
