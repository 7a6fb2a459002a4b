"""The results quoted in the README and the evaluation page are rendered from the committed
``metrics.json`` and must not go stale."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pipeline.tools import docs_results

ROOT = Path(__file__).resolve().parents[1]


def _copy(tmp: Path) -> Path:
    for path in [docs_results.METRICS, docs_results.VERIFY, *docs_results.FILES]:
        (tmp / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, tmp / path)
    return tmp


def test_the_committed_blocks_are_current() -> None:
    assert docs_results.stale(ROOT) == [], "run python -m pipeline.tools.docs_results and commit"


def test_the_readme_quotes_each_orders_gain_and_the_tests_held() -> None:
    m = json.loads((ROOT / docs_results.METRICS).read_text(encoding="utf-8"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for order, v in m["baseline"]["orders"].items():
        assert f"{order} {v['gain']:.2f} [{v['lo']:.2f}, {v['hi']:.2f}]" in readme
    models = sum(v["models"] for v in m["baseline"]["orders"].values())
    if m["baseline"]["all_beat"]:
        assert f"every trained model ({models}) beats the unigram baseline" in readme
        assert f"{m['claims']['held']} of {m['claims']['tests']} curriculum tests hold" in readme
    else:
        losing = sum(not v["beats"] for v in m["baseline"]["models"].values())
        assert f"{losing} of the {models} trained models are not shown to beat" in readme
        assert "so no curriculum test is made" in readme


def test_a_changed_result_makes_the_blocks_stale_and_a_rewrite_follows_it(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    m = json.loads((root / docs_results.METRICS).read_text(encoding="utf-8"))
    order = next(iter(m["baseline"]["orders"]))
    for name, v in m["baseline"]["orders"].items():  # every model of this order fails, the others beat it
        v.update(beats=name != order, beating=0 if name == order else v["models"])
    m["baseline"]["orders"][order].update(gain=-0.5, lo=-0.9, hi=-0.1)
    for name, model in m["baseline"]["models"].items():
        model["beats"] = not name.startswith(f"{order}/")
    m["baseline"]["all_beat"] = False
    (root / docs_results.METRICS).write_text(json.dumps(m), encoding="utf-8")
    assert docs_results.main(["--check"], root) == 1
    assert docs_results.main([], root) == 0 and docs_results.main(["--check"], root) == 0
    readme = (root / "README.md").read_text(encoding="utf-8")
    n = m["baseline"]["orders"][order]["models"]
    models = sum(v["models"] for v in m["baseline"]["orders"].values())
    stages = [k.split("/")[1] for k in m["baseline"]["models"] if k.startswith(f"{order}/")]
    assert f"{n} of the {models} trained models are not shown to beat the unigram baseline" in readme
    assert f"({order} trained to {', '.join(stages[:-1])} and {stages[-1]})" in readme
    assert f"{order} -0.50 [-0.90, -0.10]" in readme
    page = (root / "docs/evaluation.md").read_text(encoding="utf-8")
    said = f"Not shown to beat the unigram baseline on its own stage: {order} trained to"  # the report's
    assert said in page


def test_a_file_without_its_block_is_reported(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    readme = root / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("<!-- results:headline -->\n", ""))
    assert docs_results.stale(root) == [Path("README.md")]
    assert docs_results.main([], root) == 1


def test_a_run_without_intervals_or_a_parsed_control_rating_still_renders() -> None:
    """``evaluate.bootstrap.samples: 0`` writes no baseline and no claims; a control with no parsed
    rating has a None mean: the blocks say so instead of failing."""
    m = json.loads((ROOT / docs_results.METRICS).read_text(encoding="utf-8"))
    bare = {k: v for k, v in m.items() if k not in ("baseline", "claims")}
    judge = next(iter(bare["judge_controls"]["judges"].values()))
    judge["means"]["empty"] = None
    assert docs_results.headline(bare).startswith("No intervals were computed")
    assert docs_results.tests(bare).startswith("No test was made")
    assert "empty \u2013" in docs_results.report(bare)


def test_verifys_counts_are_quoted_from_its_metrics_and_follow_a_change(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    v = json.loads((root / docs_results.VERIFY).read_text(encoding="utf-8"))
    c = v["counts"]["cqa"]
    page = (root / "docs/llm.md").read_text(encoding="utf-8")
    assert f"{c['kept']} of {c['in']} CQA pairs (" in page
    c.update(kept=c["kept"] - 7, dropped={**c["dropped"], "made_up_reason": 7})
    (root / docs_results.VERIFY).write_text(json.dumps(v), encoding="utf-8")
    assert docs_results.stale(root) == [Path("docs/llm.md")]
    assert docs_results.main([], root) == 0
    page = (root / "docs/llm.md").read_text(encoding="utf-8")
    assert f"{c['kept']} of {c['in']} CQA pairs (" in page and "made_up_reason 7" in page
