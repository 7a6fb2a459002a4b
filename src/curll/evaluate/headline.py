"""The run's headline: the few numbers a reader looks at first, and which run they came from.

:func:`headline` reads them from what the ``evaluate`` stage wrote (``metrics.json``'s ``loss``,
``baseline`` and ``judge_controls``; the unigram matrices beside it): per trained order the mean
NLL per answer token of the last model (AP as a loss), forgetting and BWT of the loss where the
order has them, the unigram baseline's NLL on each model's own stage and the gain over it, each
with its 95% interval; and the judge panel's control verdict. :func:`identity` says which run:
a hash of the params file, the LLM profile and model in use, the git commit (``+dirty`` when
tracked files differ from it) and when the outputs were written. :func:`rows` lays the headline
out as one table of strings, the same for ``curll results`` (a terminal table) and the HTML
report's header, and :func:`metric_files` gives the small DVC metrics files (``<order>.json``
and ``judge.json``, rounded to the 2 decimals every table shows) that ``dvc metrics show`` prints.
"""

from __future__ import annotations

import csv
import math
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from curll.evaluate.intervals import ALPHA

#: the column heads of :func:`rows`: an interval's head has a second line, no wider than its
#: values, saying whose value it is (the last model of the order over every stage; each model on
#: its own stage; unigram and beats are each model's own stage too, as :data:`UNITS` says)
COLUMNS = ("order", "NLL [95%]\nlast model", "FGT [95%]\nlast model", "BWT [95%]\nlast model",
           "unigram", "gain [95%]\nown stage", "beats")  # fmt: skip
UNITS = ("nats per answer token. NLL: the last model's mean over stages (lower is better); FGT, "
         "BWT: of that loss (BWT > 0: later stages lowered it); unigram: the baseline's NLL on each "
         "model's own stage and gain: unigram minus the model there (> 0: lower loss), each the mean "
         f"over the order's models; beats: how many of the order's models have a gain > 0 with p < {ALPHA} "
         "on their own stage, each tested alone (the baseline gate needs all of them)")  # fmt: skip
DASH = "\u2013"  # an absent value
#: the judge's file among :func:`metric_files`; every other file is an order's
JUDGE_FILE = "judge.json"
TIME_FORMAT = "%Y-%m-%d %H:%M UTC"
Span = tuple[float | None, float | None, float | None]  # value, lo, hi


@dataclass(frozen=True)
class Order:
    """One trained order's headline; an absent value is None."""

    order: str
    nll: Span
    fgt: Span
    bwt: Span
    unigram: float | None
    gain: Span
    beats: tuple[int, int] | None  #: (models that beat the unigram baseline, models)


@dataclass(frozen=True)
class Judge:
    name: str
    informative: bool
    sign_test_p: float | None
    #: the controls' verdict in one line (:func:`curll.evaluate.controls.judge_controls`'s ``why``:
    #: the share preferring the reference, and each control rated above it); None: not recorded
    why: str | None = None

    def line(self) -> str:
        """The judge's name and verdict: its ``why`` where recorded, else its sign test's p."""
        said = f": {self.why}" if self.why else (
            f" (sign test p {self.sign_test_p:.3g})" if self.sign_test_p is not None else "")  # fmt: skip
        return f"{self.name} {'informative' if self.informative else 'not informative'}{said}"


def judges_of(metrics: Mapping[str, Any]) -> tuple[bool, list[Judge]]:
    """Whether the panel passed its controls, and each judge's verdict, from ``metrics.json``'s
    ``judge_controls``."""
    controls = metrics.get("judge_controls", {})
    judges = [Judge(name, bool(c.get("informative")), _num(c.get("sign_test_p")),
                    c["why"] if isinstance(c.get("why"), str) else None)
              for name, c in controls.get("judges", {}).items()]  # fmt: skip
    return bool(controls.get("panel_informative")), judges


@dataclass(frozen=True)
class Identity:
    params_hash: str
    llm: str
    commit: str
    written: str | None  #: when the report was written (None: not known, as for a recorded run)
    model: str = "?"  #: the trained model's preset and its training seeds

    def line(self) -> str:
        when = f" | written {self.written}" if self.written else ""
        what = f"params {self.params_hash} | LLM {self.llm} | trained {self.model}"
        return f"{what} | commit {self.commit}{when}"

    def record(self) -> dict[str, str]:
        """What ``metrics.json`` keeps of the run (``run``): all but the time, so that a rerun at one
        commit writes the same bytes (the report's header has the time)."""
        return {"params_hash": self.params_hash, "llm": self.llm, "commit": self.commit, "model": self.model}

    @classmethod
    def of_run(cls, metrics: dict[str, Any]) -> Identity | None:
        """The identity the evaluate stage recorded in ``metrics`` (None: a run before it did),
        without a time: the file's own time is its checkout's, not the run's."""
        run = metrics.get("run")
        keys = ("params_hash", "llm", "commit", "model")
        if (
            not isinstance(run, dict)
            or set(run) != set(keys)
            or not all(isinstance(run[k], str) for k in keys)
        ):
            return None  # written by another version: the caller falls back to today's identity
        return cls(written=None, **run)


@dataclass(frozen=True)
class Headline:
    orders: list[Order]
    informative: bool  # the panel passed its controls: judge scores may carry claims
    judges: list[Judge]

    def judge_line(self) -> str:
        """The panel's verdict, then each judge's (:meth:`Judge.line`), ``|`` between judges."""
        verdict = "passed" if self.informative else "failed"
        return f"judge panel {verdict} its controls: " + (
            " | ".join(j.line() for j in self.judges) or "no judge"
        )

    def gate_line(self) -> str:
        """Whether every trained model beats the unigram baseline on its own stage, the gate of
        every curriculum test (:mod:`curll.evaluate.findings`); "" for a run without the count."""
        counts = [o.beats for o in self.orders if o.beats is not None]
        if not counts:
            return ""
        beating, models = sum(b for b, _ in counts), sum(n for _, n in counts)
        if beating == models:
            return (f"baseline gate passed: every one of the {models} trained models beats the "
                    f"unigram baseline on its own stage (each at p < {ALPHA}: an intersection-union "
                    "test)")  # fmt: skip
        return (f"baseline gate failed: {models - beating} of {models} trained models not shown to "
                f"beat the unigram baseline on their own stage (each tested alone at p < {ALPHA}; the "
                "gate needs all): no curriculum claim is tested")  # fmt: skip


def _num(v: Any) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _span(values: dict[str, Any], name: str) -> Span:
    return _num(values.get(name)), _num(values.get(f"{name}_lo")), _num(values.get(f"{name}_hi"))


def _own_stage(matrices: Path, order: str, what: str) -> float | None:
    """Mean of the diagonal of ``loss_<order>_all_<what>.csv`` (``unigram``: the baseline on each
    model's own stage; ``gain``: the model's gain over it there, the cells ``gain_own``
    averages); None without the file. ``metrics.json`` records both under ``baseline`` when it
    bootstraps; this reads a run without intervals (``bootstrap.samples: 0``) or one written
    before it did."""
    path = matrices / f"loss_{order}_all_{what}.csv"
    if not path.is_file():
        return None
    with path.open(newline="", encoding="utf-8") as f:
        cells = [
            _num(float(r[str(r["trained_to"])])) for r in csv.DictReader(f) if r.get(str(r["trained_to"]))
        ]
    own = [c for c in cells if c is not None]
    return sum(own) / len(own) if own else None


def headline(metrics: dict[str, Any], matrices: Path) -> Headline:
    """The headline of ``metrics`` (``metrics.json`` as the evaluate stage writes it);
    ``matrices``: its matrices folder, for the unigram baseline's own-stage NLL."""
    base = metrics.get("baseline", {}).get("orders", {})
    out = []
    for order, kinds in metrics.get("loss", {}).items():
        if order == "untrained":
            continue
        loss = kinds.get("all", {})
        b = base.get(order, {})
        own_gain = _num(b["gain"]) if "gain" in b else _own_stage(matrices, order, "gain")
        gain = (own_gain, _num(b.get("lo", loss.get("gain_own_lo"))),
                _num(b.get("hi", loss.get("gain_own_hi"))))  # fmt: skip
        spans = (_span(loss, "mean_nll"), _span(loss, "FGT_nll_rise"), _span(loss, "BWT_nll_fall"))
        unigram = _num(b["unigram"]) if "unigram" in b else _own_stage(matrices, order, "unigram")
        beats = (int(b["beating"]), int(b["models"])) if "models" in b else None
        out.append(Order(order, *spans, unigram, gain, beats))
    return Headline(out, *judges_of(metrics))


def two(v: float, digits: int = 2) -> str:
    """``v`` to ``digits`` decimals; a value that rounds to zero shows as 0.00, never -0.00."""
    text = f"{float(v):.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def fmt(span: Span, digits: int = 2) -> str:
    """``v [lo, hi]`` to ``digits`` decimals (:func:`two`): ``v`` alone when either bound is
    undefined (None or NaN), an en dash when ``v`` is: the report's tables and sentences, the
    findings, ``curll results`` and the docs' results blocks (a heatmap cell puts value and
    interval on two lines, each by :func:`two`)."""
    v, lo, hi = span
    if v is None or math.isnan(v):
        return DASH
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return two(v, digits)
    return f"{two(v, digits)} [{two(lo, digits)}, {two(hi, digits)}]"


def rows(h: Headline) -> list[list[str]]:
    """One row of strings per order, in :data:`COLUMNS`' order (an absent value: an en dash)."""
    return [[o.order, fmt(o.nll), fmt(o.fgt), fmt(o.bwt), fmt((o.unigram, None, None)), fmt(o.gain),
             DASH if o.beats is None else f"{o.beats[0]}/{o.beats[1]}"] for o in h.orders]  # fmt: skip


def metric_files(h: Headline) -> dict[str, dict[str, float | bool | None]]:
    """File name -> content of the DVC headline metrics: ``<order>.json`` (``nll``, ``gain`` and
    their ``_lo``/``_hi``) and ``judge.json`` (``informative``). Few keys, shared by every
    order's file, so ``dvc metrics show`` prints one narrow row per order. Values are rounded
    as :func:`two` shows them, so ``curll experiments`` (which reads these files) shows what
    ``curll results`` shows, not a second rounding of a rounded value (files of experiments
    made before, with 3 decimals, are still rounded again)."""
    out: dict[str, dict[str, float | bool | None]] = {}
    for o in h.orders:
        out[f"{o.order}.json"] = {
            f"{name}{suffix}": None if v is None or math.isnan(v) else float(two(v))
            for name, span in (("nll", o.nll), ("gain", o.gain))
            for suffix, v in zip(("", "_lo", "_hi"), span, strict=True)
        }
    out[JUDGE_FILE] = {"informative": h.informative}
    return out


def read_metric_file(values: dict[str, Any]) -> tuple[Span, Span]:
    """(NLL, gain) of an order's file of :func:`metric_files`, each (value, lo, hi); a key absent
    (a file another version wrote) reads as None."""
    return _span(values, "nll"), _span(values, "gain")


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


#: what a run itself rewrites: a change there does not make the code that ran differ from the commit
_OUTPUTS = (":(exclude)data", ":(exclude)dvc.lock")


def identity(params_file: Path, written: datetime | None = None) -> Identity:
    """Which run: the first 12 hex digits of the SHA-256 of the params' values (canonical JSON:
    comments and layout do not count, so DVC writing the file back in its own style keeps it),
    ``llm.use`` (its
    profile's model; with ``split.source: import``, the folder the records came from), the
    trained model's preset, budget and seeds (or how many checkpoints of
    ``evaluate.checkpoints`` were scored in their place), the short commit of the params file's
    repository (``+dirty`` when a tracked file other than the pipeline's own
    outputs, ``data/`` and ``dvc.lock``, differs from it; ``no git`` outside one) and
    ``written`` (UTC, to the minute; None: now)."""
    from curll.release import params_hash
    from curll.yamlio import load_yaml

    params = load_yaml(params_file) or {}
    llm = params.get("llm", {})
    use = str(llm.get("use", "?"))
    model = llm.get("profiles", {}).get(use, {}).get("model")
    root = params_file.resolve().parent
    commit = _git(root, "rev-parse", "--short", "HEAD")
    if commit is None:
        commit = "no git"
    elif _git(root, "status", "--porcelain", "--untracked-files=no", "--", ".", *_OUTPUTS):
        commit += "+dirty"
    when = (written or datetime.now(UTC)).astimezone(UTC).strftime(TIME_FORMAT)
    train = params.get("train", {})
    seeds = ",".join(str(x) for x in train.get("seeds", []))
    trained = f"{train.get('preset', '?')}, {train.get('budget', 'data')} budget, seeds {seeds or '?'}"
    checkpoints = (params.get("evaluate") or {}).get("checkpoints") or {}
    if checkpoints.get("models"):  # the models scored are not the ones train made
        trained = (
            f"none here: {len(checkpoints['models'])} checkpoints in {checkpoints.get('dir', 'checkpoints')}/"
        )
    made = f"{use} ({model})" if model else use
    split = params.get("split") or {}
    if split.get("source") == "import":  # no LLM wrote the records
        made = f"none: records imported from {(split.get('imported') or {}).get('dir', 'releases')}/"
    return Identity(params_hash(params)[:12], made, commit, when, trained)
