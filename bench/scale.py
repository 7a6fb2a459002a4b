"""Scale harness: the stages after ``generate`` at N and 4N instances, without an LLM.

For each size it builds a project (bench/scale_inputs.py: the real taxonomy and vocabulary
stages, synthetic seeds and generate shards with planted duplicates), then runs, each in a
process of its own (``curll <stage> run``): generate_merge, verify, split, split_release,
tokenizer, and the training data loader (``python -m bench.scale loader``: encode and pack the
train records of all stages, as the joint run does). split's LLM ratings come from a local
OpenAI-compatible server answering at once; it rates ``--rate`` units per indicator and type,
so its LLM calls do not grow with N. Per stage it reports wall time, peak RSS (the child's
``ru_maxrss``), rows/s and the growth ratio t(4N) / (4 t(N)) (1.0 = linear), and for verify
the planted against the found duplicates.

Usage: python -m bench.scale --n 250000 [--work /tmp/curll-scale] [--no-4n]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.scale_inputs import Plan, write_inputs
from curll.yamlio import dump_yaml, load_yaml

ROOT = Path(__file__).resolve().parents[1]
#: the authors' taxonomy and the Kuperman norms (CURLL_REFERENCE overrides; absent: built-ins)
REFERENCE = Path(os.environ.get("CURLL_REFERENCE", ROOT.parent / "shared" / "reference"))
STAGES = ("generate_merge", "verify", "split", "split_release", "tokenizer", "loader")


@dataclass(frozen=True)
class StageRun:
    stage: str
    n: int
    rows: int  #: rows the stage read (instances; records for tokenizer and loader)
    wall_s: float
    peak_rss_gib: float
    failed: str = ""  #: why the stage did not finish ("" when it did)

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.wall_s if self.wall_s else 0.0


def _env() -> dict[str, str]:
    # this checkout's code first, so a run measures the code beside it (not another install)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]), DVC_NO_ANALYTICS="1")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def _rss_gib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0


#: runs its arguments as a child and writes that child's peak RSS (KiB) to $CURLL_PEAK_FILE. A
#: child's ru_maxrss starts at the RSS of the process it was forked from (Linux folds the old
#: address space's high-water mark in at exec), so the stage is forked from this small launcher,
#: not from the harness, which holds the generated inputs
LAUNCH = (
    "import os, subprocess, sys; p = subprocess.Popen(sys.argv[1:]); _, s, u = os.wait4(p.pid, 0); "
    "open(os.environ['CURLL_PEAK_FILE'], 'w').write(str(u.ru_maxrss)); "
    "sys.exit(os.waitstatus_to_exitcode(s))"
)


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def measured(cmd: list[str], cwd: Path, limit_gib: float = 0.0) -> tuple[float, float, str]:
    """Run ``cmd``: (wall seconds, peak RSS GiB of that process alone, "" or why it failed).
    Above ``limit_gib`` resident (0: no limit) it is killed, so that one stage's blow-up reads
    as a result instead of taking the machine down."""
    start = time.perf_counter()
    with tempfile.NamedTemporaryFile(suffix=".peak") as peak:
        env = {**_env(), "CURLL_PEAK_FILE": peak.name}
        proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCH, *cmd], cwd=cwd, env=env, start_new_session=True
        )
        over, done = threading.Event(), threading.Event()

        def guard() -> None:
            while not done.wait(0.2):
                if limit_gib and any(_rss_gib(c) > limit_gib for c in _children(proc.pid)):
                    over.set()
                    os.killpg(proc.pid, 9)
                    return

        threading.Thread(target=guard, daemon=True).start()
        proc.wait()
        done.set()
        wall = time.perf_counter() - start
        text = Path(peak.name).read_text().strip()
    rss = int(text) / 2**20 if text else 0.0  # KiB on Linux
    if over.is_set():
        return wall, rss, f"killed above {limit_gib} GiB resident"
    return wall, rss, f"exit {proc.returncode}" if proc.returncode else ""


def project_params(base_url: str, encoder: Path, rate: int, per_stage: int = 0) -> dict[str, Any]:
    params: dict[str, Any] = load_yaml(ROOT / "params.yaml")
    taxonomy, vocab = REFERENCE / "curll-taxonomy", REFERENCE / "aoa" / "AoA_51715_words.csv"
    params["taxonomy"]["per_stage"] = per_stage
    for section in ("taxonomy", "vocab"):  # the built-in files, wherever the project is
        params[section]["input"] = str(ROOT / params[section]["input"])
    if taxonomy.is_dir():
        params["taxonomy"].update(layout="curll-csv", input=str(taxonomy))
    if vocab.is_file():
        params["vocab"].update(format="kuperman", input=str(vocab), max_per_stage=1000)
    params["llm"]["use"] = "server"
    params["llm"]["profiles"]["server"].update(base_url=base_url, concurrency=16, batch_size=512)
    params["generate"].update(shards=4, pairs={"cqa": 5, "csqa": 3})
    params["verify_encoder"]["out"]["model"] = str(encoder)
    params["split"].update(
        test_per_indicator=1, val_per_indicator=1, rate_per_indicator=rate, max_holdout=1.0, rater="server"
    )
    params["tokenizer"]["vocab_size"] = 8192
    return params


def _must(result: tuple[float, float, str], what: str) -> None:
    if result[2]:
        raise SystemExit(f"scale: {what} failed ({result[2]})")


def build(project: Path, n: int, params: dict[str, Any]) -> dict[str, int]:
    if project.exists():
        shutil.rmtree(project)
    shutil.copytree(ROOT / "prompts", project / "prompts")
    dump_yaml(params, project / "params.yaml")
    for stage in ("taxonomy", "vocab"):
        _must(measured([sys.executable, "-m", "pipeline.tools.cli", stage, "run"], project), stage)
    if not (REFERENCE / "curll-taxonomy").is_dir():  # no authors' CSVs: a synthetic taxonomy of their size
        from bench.skill_graph_calls import PAPER_STAGES, synthetic_taxonomy
        from curll.artifacts import write_table
        from curll.schemas import IndicatorSchema

        k = params["taxonomy"]["per_stage"]
        sizes = {s: min(n, k) if k else n for s, n in PAPER_STAGES.items()}
        write_table(
            synthetic_taxonomy(sizes), project / params["taxonomy"]["out"]["indicators"], IndicatorSchema
        )
    return write_inputs(project, params, Plan(n=n, shards=params["generate"]["shards"]))


def loader(project: Path) -> None:
    """The training data of the largest run, the joint run over every stage: its train records
    read, encoded and packed (:func:`curll.train.runs.pack_run`), then every row made once."""
    from transformers import AutoTokenizer

    from curll.config import load_params
    from curll.train.orders import plan
    from curll.train.records import RecordFile
    from curll.train.runs import pack_run

    params = load_params(project / "params.yaml")
    p = params.train
    records = RecordFile(params.split.out.records, "train")
    tok = AutoTokenizer.from_pretrained(params.tokenizer.out.dir)
    run = plan("joint", p.stages, seed=p.seeds[0], replay=p.continual.replay)[-1]
    packed = pack_run(records, run, p, tok)
    for start in range(0, packed.rows, p.batch):  # an epoch's batches, as the trainer asks for them
        packed.batch(range(start, min(start + p.batch, packed.rows)))
    print(json.dumps(packed.stats()))


def _rows(project: Path, params: dict[str, Any], stage: str, counts: dict[str, int]) -> int:
    import pyarrow.parquet as pq

    if stage in ("tokenizer", "loader", "split_release"):
        return int(pq.ParquetFile(project / params["split"]["out"]["records"]).metadata.num_rows)
    if stage == "split":
        tables = [
            f"{params['verify']['out']['tables']}/{k}.parquet" for k in ("context", "ir", "cqa", "csqa")
        ]
        return sum(int(pq.ParquetFile(project / t).metadata.num_rows) for t in tables)
    return counts["instances"]


def run_size(
    work: Path,
    n: int,
    params: dict[str, Any],
    limit_gib: float,
    *,
    reuse: bool = False,
    only: set[str] | None = None,
) -> list[StageRun]:
    project = work / f"n{n}"
    if reuse and (project / "planted.json").is_file():  # the inputs and earlier outputs of a run
        counts = json.loads((project / "planted.json").read_text())
        # this run's params (its server's address above all: the earlier run's server is gone)
        dump_yaml(params, project / "params.yaml")
    else:
        counts = build(project, n, params)
        (project / "planted.json").write_text(json.dumps(counts))
    print(f"scale: N={n}: {json.dumps(counts)}", file=sys.stderr)
    out = []
    for stage in STAGES:
        if only and stage not in only:
            continue
        rows = _rows(project, params, stage, counts) if stage != "generate_merge" else counts["instances"]
        cmd = [sys.executable, "-m", "pipeline.tools.cli", stage, "run"]
        if stage == "loader":
            cmd = [sys.executable, "-m", "bench.scale", "loader", str(project)]
        wall, rss, failed = measured(cmd, project, limit_gib)
        out.append(StageRun(stage, n, rows, round(wall, 2), round(rss, 3), failed))
        print(f"scale: N={n} {stage}: {wall:.1f} s, {rss:.2f} GiB {failed}", file=sys.stderr)
        if failed:  # the later stages read its outputs
            break
    return out


def dedup_found(project: Path) -> dict[str, Any]:
    """Planted copies against verify's drops, for passages and IR pairs."""
    planted = json.loads((project / "planted.json").read_text())
    path = project / "data/verify/metrics.json"
    if not path.is_file():
        return {"planted": planted}
    counts = json.loads(path.read_text())["counts"]
    return {"planted": planted, "dropped": {k: counts[k]["dropped"] for k in ("context", "ir")}}


def table(runs: list[StageRun], n: int) -> list[dict[str, Any]]:
    small = {r.stage: r for r in runs if r.n == n}
    big = {r.stage: r for r in runs if r.n == 4 * n}
    rows = []
    for stage, r in small.items():
        row = {**asdict(r), "rows_per_s": round(r.rows_per_s)}
        if stage in big:
            b = big[stage]
            row.update(wall_4n_s=b.wall_s, peak_rss_4n_gib=b.peak_rss_gib, rows_4n=b.rows,
                       growth=round(b.wall_s / (4 * r.wall_s), 3))  # fmt: skip
        rows.append(row)
    return rows


def rating_server() -> Any:
    from harness.server import FakeChatServer

    class Rater(FakeChatServer):
        def answer(self, body: dict[str, Any]) -> str:
            digest = hashlib.sha256(json.dumps(body["messages"]).encode()).digest()
            return json.dumps({"rating": digest[0] % 5 + 1, "explanation": "Clear and suitable."})

    return Rater()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["loader"]:
        os.chdir(argv[1])
        loader(Path(argv[1]))
        return {}
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000, help="instances (passages + IR + QA pairs)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/curll-scale"))
    ap.add_argument("--no-4n", action="store_true", help="run N only")
    ap.add_argument("--rate", type=int, default=4, help="split.rate_per_indicator")
    ap.add_argument("--limit-gib", type=float, default=16.0, help="kill a stage above this RSS")
    ap.add_argument("--per-stage", type=int, default=0, help="indicators a stage (0: all, 1,343 in all)")
    ap.add_argument("--encoder", type=Path, help="a verify_encoder model folder (default: distil one)")
    ap.add_argument("--reuse", action="store_true", help="keep the projects of an earlier run in --work")
    ap.add_argument("--stages", help="comma-separated stages to run (default: all)")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    encoder = (args.encoder or args.work / "encoder").resolve()
    with rating_server() as server:
        if not (encoder / "model.safetensors").is_file():
            setup = args.work / "encoder-project"
            setup.mkdir(exist_ok=True)
            params = project_params(server.base_url, encoder, args.rate, args.per_stage)
            dump_yaml(params, setup / "params.yaml")
            _must(
                measured([sys.executable, "-m", "pipeline.tools.cli", "verify_encoder", "run"], setup),
                "encoder",
            )
        runs: list[StageRun] = []
        for n in [args.n] if args.no_4n else [args.n, 4 * args.n]:
            params = project_params(server.base_url, encoder, args.rate, args.per_stage)
            only = set(args.stages.split(",")) if args.stages else None
            runs += run_size(args.work, n, params, args.limit_gib, reuse=args.reuse, only=only)
    result = {
        "n": args.n,
        "stages": table(runs, args.n),
        "verify_dropped": dedup_found(args.work / f"n{args.n}"),
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
