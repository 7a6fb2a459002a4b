"""Which results may be claimed: the tests behind the report's sentences, corrected for their number.

A test is one value with its bootstrap interval and p-value (:mod:`curll.evaluate.intervals`),
tested against 0, in two families tested in sequence (serial gatekeeping: Dmitrienko,
Offen & Westfall 2003; the family-wise error of all claims stays at most :data:`ALPHA`):

1. ``baseline`` (the gate): per trained model (an order trained up to stage t), its gain on
   its own stage t, the unigram baseline's NLL minus the model's (``gain/<order>/all/<t>/<t>``).
   Each model is tested alone: its gain above 0 with p below ALPHA. The gate's one claim is
   that every model beats the baseline: an intersection-union test (Berger 1982), whose error is
   at most ALPHA when each model is tested at ALPHA, so these p-values are not adjusted
   (``p_holm`` is ``p``); a model's ``holds`` is that one test's outcome, not a claim. Each order's mean gain
   over its models (``gain_own``) is shown with its interval, not tested.
2. ``curriculum``, tested only if the gate passes (else its tests are listed as not tested: a
   model that does not beat token frequencies supports no curriculum claim), Holm over all its
   tests, loss and judge together (a claim holds when its adjusted p is below ALPHA): per
   order, the loss's transfer metrics at the last stage (BWT of continual; FWT against the
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
from curll.evaluate.headline import fmt, judges_of
from curll.evaluate.intervals import ALPHA, Interval, holm
from curll.orders import pair_of, ranked
from curll.schemas.evaluate import UNTRAINED

#: the gate's wording (what, positive meaning, negative meaning) and the kind it pools
GATE: Wording = ("gain over the unigram baseline on its own stage (nats a token)",
                 "the model beats a unigram model of its training answers",
                 "a unigram model of its training answers beats it")  # fmt: skip
GATE_KIND = "all"
#: per curriculum family: (kind of the matrices tested, metric -> (wording, how it is tested)):
#: the CL metrics with a test (:data:`curll.evaluate.cl.METRICS`)
TESTS: dict[str, tuple[str, dict[str, tuple[Wording, str]]]] = {
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
        parts = self.key.split("/")
        subject = (
            " - ".join(pair_of(parts[1])) if parts[0] == "diff"
            else f"{parts[1]} trained to stage {parts[3]}" if parts[0] == "gain"
            else parts[0]
        )  # fmt: skip
        span = fmt((self.value, self.lo, self.hi))
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


def gate_keys(loss: Mapping[str, Interval]) -> list[str]:
    """``gain/<order>/all/<t>/<t>`` of every trained model with a gain cell in ``loss`` (the loss
    family's bounds), orders in the registry's order, stages ascending. A model whose own stage
    has no scored record has a key all the same, absent from ``loss``: it is not shown to beat
    the baseline."""
    keys = [k.split("/") for k in loss]
    models = {(p[1], int(p[3])) for p in keys
              if len(p) == 5 and p[0] == "gain" and p[2] == GATE_KIND and p[1] != UNTRAINED}  # fmt: skip
    rank = {o: i for i, o in enumerate(ranked({o for o, _ in models}))}  # an unknown order goes last
    ordered = sorted(models, key=lambda m: (rank.get(m[0], len(rank)), m[0], m[1]))
    return [f"gain/{o}/{GATE_KIND}/{t}/{t}" for o, t in ordered]


#: a value the bounds do not hold
NO_VALUE = Interval(None, None, None)


def _beats(iv: Interval) -> bool:
    return iv.p is not None and iv.value is not None and iv.p < ALPHA and iv.value > 0


def claims(bounds: Mapping[str, Mapping[str, Interval]], *, judge_informative: bool) -> list[Claim]:
    """The gate's claims (one per trained model, not adjusted), then the curriculum family if
    every model beats the baseline (``bounds``: family -> name -> Interval; ``loss`` holds the
    gate's cells too); the judge's tests only if ``judge_informative``."""
    loss = bounds.get("loss", {})
    keys = gate_keys(loss)
    gate = [_claim("baseline", k, *GATE, loss[k], loss[k].p) for k in keys
            if loss.get(k, NO_VALUE).p is not None]  # fmt: skip
    passed = bool(keys) and all(_beats(loss.get(k, NO_VALUE)) for k in keys)
    judged = [("judge", bounds.get("judge", {}))] if judge_informative else []
    return gate + _family([("loss", loss), *judged], tested=passed)


def _claim(family: str, key: str, what: str, up: str, down: str, iv: Interval, p_adj: float | None) -> Claim:
    assert iv.value is not None and iv.p is not None
    a, b = pair_of(key.split("/")[1]) if key.startswith("diff/") else ("", "")
    meaning = (up if iv.value > 0 else down).format(a=a, b=b)
    p_adj = None if p_adj is None else round(p_adj, 6)
    holds = p_adj is not None and p_adj < ALPHA
    return Claim(family, key, what, iv.value, iv.lo, iv.hi, round(iv.p, 6), p_adj, holds, meaning)


def _family(sources: list[tuple[str, Mapping[str, Interval]]], *, tested: bool = True) -> list[Claim]:
    """The claims of ``sources`` (family, bounds), Holm-adjusted together; all marked not tested
    (no adjusted p, not held) when ``tested`` is False."""
    rows = [(family, key, what, up, down, source[key])
            for family, source in sources for key, what, up, down in _tested(family, source)]  # fmt: skip
    adjusted = holm({f"{f}:{k}": float(iv.p) for f, k, *_, iv in rows if iv.p is not None})
    return [_claim(family, key, what, up, down, iv, adjusted[f"{family}:{key}"] if tested else None)
            for family, key, what, up, down, iv in rows]  # fmt: skip


def baseline_verdict(loss: Mapping[str, Interval]) -> dict[str, Any]:
    """The gate, from the loss family's bounds: ``models``, per ``<order>/<t>``, the gain on its
    own stage with interval and p and ``beats`` (gain > 0, p < ALPHA); ``orders``, per trained
    order, its models' mean gain (``gain_own``) with interval, how many models it has and how
    many beat the baseline, and ``beats`` (all of them); ``all_beat``: every model beats it (the
    curriculum claims were tested)."""
    models: dict[str, dict[str, Any]] = {}
    for key in gate_keys(loss):
        _, order, _, stage, _ = key.split("/")
        iv = loss.get(key, NO_VALUE)
        p = None if iv.p is None else round(iv.p, 6)
        models[f"{order}/{stage}"] = {"gain": iv.value, "lo": iv.lo, "hi": iv.hi, "p": p, "beats": _beats(iv)}
    orders: dict[str, dict[str, Any]] = {}
    for name, m in models.items():
        order = name.split("/")[0]
        if order not in orders:
            mean = loss.get(f"{order}/{GATE_KIND}/gain_own", NO_VALUE)
            orders[order] = {"gain": mean.value, "lo": mean.lo, "hi": mean.hi, "models": 0, "beating": 0}
        orders[order]["models"] += 1
        orders[order]["beating"] += int(m["beats"])
    for v in orders.values():
        v["beats"] = v["beating"] == v["models"]
    test = f"every trained model's own-stage gain > 0 with p < {ALPHA} (intersection-union: not adjusted)"
    return {"test": test, "models": models, "orders": orders,
            "all_beat": bool(models) and all(m["beats"] for m in models.values())}  # fmt: skip


def gate_counts(base: Mapping[str, Any]) -> tuple[int, int]:
    """(trained models, models that beat the baseline) of ``base`` (:func:`baseline_verdict`); a
    ``metrics.json`` of an older version, with a verdict per order only, counts each order once."""
    per = base.get("orders", {}).values()
    return (sum(int(v.get("models", 1)) for v in per),
            sum(int(v.get("beating", bool(v.get("beats")))) for v in per))  # fmt: skip


def not_beating(base: Mapping[str, Any]) -> str:
    """The models of ``base`` (:func:`baseline_verdict`) not shown to beat the baseline, by order
    in the registry's order, stages ascending: ``independent trained to 0, 1 and 4; continual
    trained to 3``."""
    if "models" not in base:  # an older metrics.json: a verdict per order
        return ", ".join(o for o in ranked(base.get("orders", {})) if not base["orders"][o].get("beats"))
    by: dict[str, list[int]] = {}
    for name, m in base["models"].items():  # read back from JSON: keys in any order
        if not m["beats"]:
            order, stage = name.split("/")
            by.setdefault(order, []).append(int(stage))
    return "; ".join(f"{o} trained to {_and([str(s) for s in sorted(by[o])])}" for o in ranked(by))


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def summary(metrics: Mapping[str, Any]) -> list[str]:
    """The report's opening sentences, from ``metrics.json``: the baseline verdict first, then the
    judge's control verdict, then one sentence per claim that holds after correction."""
    base = metrics.get("baseline")
    if not base or not base["orders"]:
        return ["No intervals were computed (evaluate.bootstrap.samples: 0): no claim is made."]
    per = {o: base["orders"][o] for o in ranked(base["orders"])}  # in the registry's order
    gains = "; ".join(f"{o} {fmt((v['gain'], v['lo'], v['hi']))}" for o, v in per.items())
    models, beating = gate_counts(base)
    means = f"mean gain per order in nats per answer token, 95% interval: {gains}"
    if base["all_beat"]:
        out = [f"Every trained model beats the unigram baseline on its own stage (each of the {models} "
               f"with p < {ALPHA}; {means})."]  # fmt: skip
    else:
        losing = models - beating
        out = [f"Not shown to beat the unigram baseline on its own stage: {not_beating(base)} ({losing} of "
               f"{models} models; each must have a gain above 0 with p < {ALPHA}; {means}). No curriculum "
               "claim is tested at this scale."]  # fmt: skip
    compute = metrics.get("compute")
    if compute:
        out.append(
            f"Compute: budget '{compute['budget']}' ("
            + ("every order the same optimizer steps and rows per stage" if compute["budget"] == "steps"
               else "every order one pass of its own data per epoch: orders get unequal steps")
            + ("; continual's replay rows count within its stage's steps" if compute.get("replay") else "")
            + ")."
        )  # fmt: skip
    passed, judges = judges_of(metrics)
    if metrics.get("judge_controls") and not passed:
        why = " | ".join(j.line() for j in judges)
        out.append("The judge panel failed its controls" + (f" ({why})" if why else "")
                   + ": judge scores support no claim.")  # fmt: skip
    listed = [c for c in metrics.get("claims", {}).get("list", []) if c["family"] != "baseline"]
    tested = [c for c in listed if c["p_holm"] is not None]
    held = [c for c in tested if c["holds"]]
    out += [Claim(**c).sentence() for c in held]
    if tested:
        out.append(f"{len(held)} of {len(tested)} curriculum tests hold (Holm over them, alpha {ALPHA}).")
    elif listed:
        out.append(f"{len(listed)} curriculum tests not made (the baseline gate failed).")
    return out


def as_json(found: list[Claim]) -> dict[str, Any]:
    made = [c for c in found if c.p_holm is not None]
    curriculum = [c for c in made if c.family != "baseline"]
    return {"alpha": ALPHA, "correction": "baseline: none (intersection-union gate); the curriculum "
            "tests (loss and judge): Holm over all of them, made only when the gate passes (serial "
            "gatekeeping)",
            "tests": len(curriculum), "held": sum(c.holds for c in curriculum),
            "not_tested": len(found) - len(made), "list": [asdict(c) for c in found]}  # fmt: skip


def verdict(listed: Mapping[str, Any]) -> str:
    """A claim of :func:`as_json`'s ``list`` as the report and the docs say it: "not tested" (the
    gate failed, so its p was never weighed), else "yes" or "no"; a baseline test is one model
    alone, part of the gate and no claim of its own."""
    if listed["p_holm"] is None:
        return "not tested"
    held = "yes" if listed["holds"] else "no"
    return f"{held} (this model alone)" if listed["family"] == "baseline" else held
