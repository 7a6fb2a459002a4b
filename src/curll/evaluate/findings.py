"""Which results may be claimed: the tests behind the report's sentences, corrected for their number.

A claim is one value with its bootstrap interval and p-value (:mod:`curll.evaluate.intervals`),
tested against 0, in two families tested in sequence (serial gatekeeping: Dmitrienko,
Offen & Westfall 2003), each corrected by Holm's method (a claim holds when its adjusted p is
below :data:`ALPHA`; the family-wise error of all claims stays at most ALPHA):

1. ``baseline`` (the gate): per trained order, ``gain_own``, the unigram baseline's NLL minus
   the model's on each model's own stage. An order beats the baseline when its claim holds and
   the gain is positive.
2. ``curriculum``, tested only if every order beats the baseline (else its claims are listed
   as not tested: a model that does not beat token frequencies supports no curriculum claim):
   per order, the loss's transfer metrics at the last stage (BWT of continual; FWT against the
   independent models; zero-shot FWT against the untrained model) and the paired difference
   of ``mean_nll`` between every two orders; and the same on judge scores (summed types) only
   when the judge panel passed its controls (``judges.json`` ``panel_informative``).

Forgetting (FGT) is shown, never tested: it is a maximum of noisy values minus one of them, so it
is above 0 with no change at all; a fall in the last model's scores is tested as BWT, which is
unbiased under no change. Nothing here is written by hand about a result: each sentence follows
the values of ``metrics.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from curll.evaluate.cl import METRICS, Wording
from curll.evaluate.intervals import Interval, holm
from curll.orders import pair_of, ranked

ALPHA = 0.05

#: per family: (kind of the matrices tested, metric -> (wording, how it is tested)); the
#: curriculum families' entries are the CL metrics with a test (:data:`curll.evaluate.cl.METRICS`)
TESTS: dict[str, tuple[str, dict[str, tuple[Wording, str]]]] = {
    "baseline": ("all", {"gain_own": (("gain over the unigram baseline on its own stage (nats a token)",
                                       "the model beats a unigram model of its training answers",
                                       "a unigram model of its training answers beats it"), "value")}),
    "loss": ("all", {m.loss_name: (m.loss, m.test) for m in METRICS.values() if m.test}),
    "judge": ("sum", {m.name: (m.judge, m.test) for m in METRICS.values() if m.test}),
}  # fmt: skip


@dataclass(frozen=True)
class Claim:
    family: str
    key: str  # its name in the family's bounds: continual/all/BWT_nll_fall, diff/joint-continual/all/AP
    what: str
    value: float
    lo: float | None
    hi: float | None
    p: float
    p_holm: float | None  # None: not tested (the gate failed)
    holds: bool
    direction: str  # what the sign of the value means

    def sentence(self) -> str:
        subject = (
            " - ".join(pair_of(self.key.split("/")[1]))
            if self.key.startswith("diff/")
            else self.key.split("/")[0]
        )
        span = f"{self.value:.3f}"
        if self.lo is not None and self.hi is not None:
            span += f" [{self.lo:.3f}, {self.hi:.3f}]"
        adjusted = "not tested" if self.p_holm is None else f"Holm-adjusted p {self.p_holm:.3g}"
        return f"{subject}: {self.what} {span}, {adjusted}: {self.direction}."


def _tested(family: str, bounds: Mapping[str, Interval]) -> list[tuple[str, str, str, str]]:
    """(key, what, positive meaning, negative meaning) of the family's values that have a p-value."""
    kind, metrics = TESTS[family]
    out = []
    for key, iv in sorted(bounds.items()):
        parts = key.split("/")
        diff = parts[0] == "diff"
        if iv.p is None or len(parts) != (4 if diff else 3) or parts[-2] != kind or parts[-1] not in metrics:
            continue
        (what, up, down), test = metrics[parts[-1]]
        if diff != (test == "difference"):  # levels are compared as differences only
            continue
        out.append((key, ("difference in " + what) if diff else what, up, down))
    return out


def claims(bounds: Mapping[str, Mapping[str, Interval]], *, judge_informative: bool) -> list[Claim]:
    """The baseline family, then the curriculum family if every baseline claim holds with a
    positive gain (``bounds``: family -> name -> Interval; ``loss`` holds the baseline's values
    too); the judge's tests only if ``judge_informative``."""
    gate = _family([("baseline", bounds.get("loss", {}))])
    passed = bool(gate) and all(c.holds and c.value > 0 for c in gate)
    judged = [("judge", bounds.get("judge", {}))] if judge_informative else []
    return gate + _family([("loss", bounds.get("loss", {})), *judged], tested=passed)


def _family(sources: list[tuple[str, Mapping[str, Interval]]], *, tested: bool = True) -> list[Claim]:
    """The claims of ``sources`` (family, bounds), Holm-adjusted together; all marked not tested
    (no adjusted p, not held) when ``tested`` is False."""
    rows = [(family, key, what, up, down, source[key])
            for family, source in sources for key, what, up, down in _tested(family, source)]  # fmt: skip
    adjusted = holm({f"{f}:{k}": float(iv.p) for f, k, *_, iv in rows if iv.p is not None})
    out = []
    for family, key, what, up, down, iv in rows:
        assert iv.value is not None and iv.p is not None
        p_adj = round(adjusted[f"{family}:{key}"], 6) if tested else None
        a, b = pair_of(key.split("/")[1])
        meaning = (up if iv.value > 0 else down).format(a=a, b=b)
        holds = p_adj is not None and p_adj < ALPHA
        out.append(Claim(family, key, what, iv.value, iv.lo, iv.hi, round(iv.p, 6), p_adj, holds, meaning))
    return out


def baseline_verdict(found: list[Claim]) -> dict[str, Any]:
    """Per trained order, from the baseline claims: its own-stage gain over the unigram baseline
    with interval and Holm-adjusted p, and ``beats``: the claim holds and the gain is positive.
    ``all_beat``: every order beats it (the curriculum claims were tested)."""
    gate = [c for c in found if c.family == "baseline"]
    per = {c.key.split("/")[0]: {"gain": c.value, "lo": c.lo, "hi": c.hi, "p_holm": c.p_holm,
                                 "beats": c.holds and c.value > 0} for c in gate}  # fmt: skip
    return {"orders": per, "all_beat": bool(per) and all(v["beats"] for v in per.values())}


def summary(metrics: Mapping[str, Any]) -> list[str]:
    """The report's opening sentences, from ``metrics.json``: the baseline verdict first, then the
    judge's control verdict, then one sentence per claim that holds after correction."""
    base = metrics.get("baseline")
    if not base or not base["orders"]:
        return ["No intervals were computed (evaluate.bootstrap.samples: 0): no claim is made."]
    per = {o: base["orders"][o] for o in ranked(base["orders"])}  # in the registry's order
    gains = "; ".join(f"{o} {v['gain']:.3f} [{_f(v['lo'])}, {_f(v['hi'])}]" for o, v in per.items())
    if base["all_beat"]:
        out = [f"Every order's models beat the unigram baseline on their own stage (gain in nats per answer "
               f"token, 95% interval: {gains}; Holm over the orders)."]  # fmt: skip
    else:
        losing = [o for o, v in per.items() if not v["beats"]]
        out = [f"Not shown to beat the unigram baseline on their own stage: {', '.join(losing)} (gain in"
               f" nats per answer token, 95% interval: {gains}). No curriculum claim is tested at this"
               " scale."]  # fmt: skip
    compute = metrics.get("compute")
    if compute:
        out.append(
            f"Compute: budget '{compute['budget']}' ("
            + ("every order the same optimizer steps and rows per stage" if compute["budget"] == "steps"
               else "every order one pass of its own data per epoch: orders get unequal steps")
            + ("; continual's replay rows count within its stage's steps" if compute.get("replay") else "")
            + ")."
        )  # fmt: skip
    judge = metrics.get("judge_controls", {})
    if judge and not judge.get("panel_informative", False):
        why = "; ".join(f"{name}: {j['why']}" for name, j in judge.get("judges", {}).items() if j.get("why"))
        out.append("The judge panel failed its controls" + (f" ({why})" if why else "")
                   + ": judge scores support no claim.")  # fmt: skip
    listed = metrics.get("claims", {}).get("list", [])
    tested = [c for c in listed if c["p_holm"] is not None]
    held = [c for c in tested if c["holds"]]
    for c in held:
        if c["family"] != "baseline":
            out.append(Claim(**c).sentence())
    skipped = len(listed) - len(tested)
    out.append(f"{len(held)} of {len(tested)} tests made hold (Holm within each family, alpha {ALPHA})"
               + (f"; {skipped} curriculum tests not made." if skipped else "."))  # fmt: skip
    return out


def as_json(found: list[Claim]) -> dict[str, Any]:
    made = [c for c in found if c.p_holm is not None]
    return {"alpha": ALPHA, "correction": "holm within each family, baseline family first (gatekeeping)",
            "tests": len(made), "held": sum(c.holds for c in made), "not_tested": len(found) - len(made),
            "list": [asdict(c) for c in found]}  # fmt: skip


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"
