"""One contract for every check of verify, and for the generate checks that share them: keep
a row, or drop it with a reason.

The shape follows datatrove's filters, where a filter keeps a document or drops it with a
reason and the pipeline step counts the reasons. Here a check returns :data:`Verdict`:
``None`` keeps the row, and a :class:`Drop` drops it, carrying a ``code`` from
:data:`curll.schemas.quality.VERIFY_REASONS` and a ``detail``, the evidence a person reads
(``"31 not in [40, 250]"``). Row checks return one verdict. Set checks (duplicates, QA
counts, orphans) return ``{row id: Drop}``, listing only the dropped rows.

Code and detail stay apart all the way to the output. The rejects table stores them in its
``reason`` and ``detail`` columns, and the yield tally counts by code. The single place they
are joined is ``str(drop)`` (``"code: detail"``), for the engine, whose reasons are text
(:func:`curll.generate.tasks.form`).
"""

from __future__ import annotations

from dataclasses import dataclass

from curll.schemas.quality import VERIFY_REASONS


@dataclass(frozen=True, slots=True)
class Drop:
    """Why a row goes: ``code`` (one of VERIFY_REASONS; anything else raises ValueError) and
    ``detail`` (free text for people, never parsed)."""

    code: str
    detail: str

    def __post_init__(self) -> None:
        if self.code not in VERIFY_REASONS:
            raise ValueError(f"unknown verify reason {self.code!r} (see VERIFY_REASONS)")

    def __str__(self) -> str:
        return f"{self.code}: {self.detail}"


#: a check's answer on one row: None keeps it, a Drop says why it goes
Verdict = Drop | None
