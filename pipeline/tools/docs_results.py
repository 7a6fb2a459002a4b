"""The results quoted in the README and the docs, generated from the committed run.

Each quoted block sits between ``<!-- results:NAME -->`` and ``<!-- /results -->`` and is
rendered from a metrics file tracked by git: from ``data/evaluate/metrics.json`` (the evaluate
stage's), the README's one-paragraph headline, and in the evaluation page the report's own
opening sentences (:func:`curll.evaluate.findings.summary`), the judge's control results and
every test made; from ``data/verify/metrics.json``, what verify kept of each type in
``docs/llm.md``. So no number about a result is written by hand, and none can go stale:

    python -m pipeline.tools.docs_results            # rewrite the blocks
    python -m pipeline.tools.docs_results --check    # exit 1 if a committed block is stale

``tests/test_docs_results.py`` fails while a committed block differs from :func:`render`.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from curll.evaluate.findings import gate_counts, not_beating, summary, verdict
from curll.evaluate.headline import DASH, fmt
from curll.orders import ranked

METRICS = Path("data/evaluate/metrics.json")
VERIFY = Path("data/verify/metrics.json")
#: file -> the names of the blocks it holds
FILES = {Path("README.md"): ("headline",), Path("docs/evaluation.md"): ("report", "tests"),
         Path("docs/llm.md"): ("verify",)}  # fmt: skip
_BLOCK = re.compile(r"(<!-- results:(\w+) -->\n)(.*?)(<!-- /results -->)", re.S)


def _mean(v: float | None) -> str:
    return DASH if v is None else f"{v:.2f}"  # None: no rating of that control parsed


def headline(m: Mapping[str, Any]) -> str:
    """The README's paragraph: the baseline verdict per order, how many tests hold, the judge;
    without intervals (``evaluate.bootstrap.samples: 0``), the report's sentence saying so."""
    base, claims = m.get("baseline") or {}, m.get("claims") or {}
    if not base.get("orders"):
        return summary(m)[0]
    per = {o: base["orders"][o] for o in ranked(base["orders"])}
    gains = ", ".join(f"{o} {fmt((v['gain'], v.get('lo'), v.get('hi')))}" for o, v in per.items())
    models, beating = gate_counts(base)
    if base["all_beat"]:
        verdict = f"every trained model ({models}) beats the unigram baseline on its own stage"
        tests = f"and {claims['held']} of {claims['tests']} curriculum tests hold"
    else:
        losing = models - beating
        verdict = (f"{losing} of the {models} trained models are not shown to beat the unigram baseline on "
                   f"their own stage ({not_beating(base)})")  # fmt: skip
        tests = "so no curriculum test is made"
    judges = m.get("judge_controls") or {}
    who = ", ".join(judges.get("scored_by") or [])
    judged = ("no judge scored the run" if not who else f"the judge ({who}) passes its controls"
              if judges.get("panel_informative")
              else f"the judge ({who}) fails its controls, so no claim rests on judge scores")  # fmt: skip
    return (f"On the default params {verdict}; mean gain per order in nats per answer token, 95% "
            f"interval: {gains}; {tests}; {judged}.")  # fmt: skip


def report(m: Mapping[str, Any]) -> str:
    """What made the run (its record's trained models and LLM), the report's opening sentences as a
    quote, then each judge's control result."""
    run = m["run"]
    said = f"Trained: {run['model']}; data from {run['llm']}. The report opens with:\n\n"
    said += "\n>\n".join(f"> {line}" for line in summary(m))
    judges = (m.get("judge_controls") or {}).get("judges") or {}
    controls = [f"- `{name}`: {'passes' if j['informative'] else 'fails'} its controls ({j['why']}); mean "
                "ratings " + ", ".join(f"{k} {_mean(v)}" for k, v in j["means"].items())
                for name, j in judges.items()]  # fmt: skip
    return f"{said}\n\nThe judge's controls:\n\n" + ("\n".join(controls) or "No judge scored this run.")


def tests(m: Mapping[str, Any]) -> str:
    """Every test made (and every one not made), with its value, interval and adjusted p (Holm over
    the curriculum tests; the gate's tests are not adjusted, each a model alone)."""
    listed = (m.get("claims") or {}).get("list") or []
    if not listed:
        return "No test was made (no intervals: `evaluate.bootstrap.samples: 0`)."
    rows = ["| family | what | value [95%] | p | adjusted p | holds |", "|---|---|---|---|---|---|"]
    for c in listed:
        held = verdict(c)
        holm = "" if c["p_holm"] is None else f"{c['p_holm']:.3g}"
        value = fmt((c["value"], c["lo"], c["hi"]), 3)
        cells = [c["family"], f"`{c['key']}`: {c['what']}", value, f"{c['p']:.3g}", holm, held]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


#: verify's types, in the order the sentence names them, with their names there
_KINDS = {"context": "passages", "ir": "IR pairs", "cqa": "CQA pairs", "csqa": "CSQA pairs"}


def verified(v: Mapping[str, Any]) -> str:
    """What verify kept of each type, of how many, and why it dropped the rest (its reasons as
    ``rejects.parquet`` names them, most frequent first)."""
    counts = v["counts"]
    parts = []
    for kind, name in _KINDS.items():
        if kind not in counts:
            continue
        c = counts[kind]
        why = sorted(c["dropped"].items(), key=lambda r: (-r[1], r[0]))
        reasons = f" ({', '.join(f'{r} {n}' for r, n in why)})" if why else ""
        parts.append(f"{c['kept']} of {c['in']} {name}{reasons}")
    listed = ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else "".join(parts)
    return (f"In the committed run (`{VERIFY}`), verify kept {listed}: each drop is a row of "
            "`data/verify/rejects.parquet`, where an unparsed request, one row, counts the pairs it "
            "asked for (`generate.pairs`).")  # fmt: skip


#: block -> (the metrics file it is rendered from, how)
RENDER = {"headline": (METRICS, headline), "report": (METRICS, report), "tests": (METRICS, tests),
          "verify": (VERIFY, verified)}  # fmt: skip


def load(root: Path = Path()) -> dict[Path, Any]:
    """Every metrics file a block is rendered from, read from ``root``."""
    return {p: json.loads((root / p).read_text(encoding="utf-8")) for p in {s for s, _ in RENDER.values()}}


def render(text: str, loaded: Mapping[Path, Any]) -> str:
    """``text`` with each results block rendered anew from ``loaded`` (:func:`load`)."""

    def block(b: re.Match[str]) -> str:
        source, how = RENDER[b[2]]
        return f"{b[1]}\n{how(loaded[source])}\n\n{b[4]}"

    return _BLOCK.sub(block, text)


def stale(root: Path = Path()) -> list[Path]:
    """The files whose blocks differ from :func:`render`, or that lack a block they should hold;
    rewrites nothing."""
    metrics = load(root)
    out = []
    for path, names in FILES.items():
        text = (root / path).read_text(encoding="utf-8")
        found = [b[2] for b in _BLOCK.finditer(text)]
        if sorted(found) != sorted(names) or render(text, metrics) != text:
            out.append(path)
    return out


def main(argv: list[str], root: Path = Path()) -> int:
    if argv not in ([], ["--check"]):
        print("usage: python -m pipeline.tools.docs_results [--check]", file=sys.stderr)
        return 2
    bad = stale(root)
    if argv == ["--check"]:
        for path in bad:
            print(
                f"{path}: results blocks are stale: run python -m pipeline.tools.docs_results",
                file=sys.stderr,
            )
        return 1 if bad else 0
    metrics = load(root)
    for path in bad:
        text = (root / path).read_text(encoding="utf-8")
        (root / path).write_text(render(text, metrics), encoding="utf-8")
        print(f"wrote {path}")
    for path in stale(root):  # still stale: a block's markers are missing
        print(f"{path}: needs the blocks {', '.join(FILES[path])} (<!-- results:NAME -->\n<!-- /results -->)",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
