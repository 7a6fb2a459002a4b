"""The LLM backends side by side on the default slice's own requests: tokens/s and answers per minute.

Two steps, so every backend answers the very same requests (same prompts, schemas and seeds):

1. ``capture``: reruns the LLM stages (skill_graph, templates, generate, split,
   evaluate_judge) of a project that has already run (``--project``, default this one) in
   a scratch copy of it, its request cache included, so every answer comes from the cache
   in seconds, and records each task's first-attempt requests (``--out``, JSON lines).
2. ``replay``: sends up to ``--per-task`` requests of each task (the first ones, in the
   stage's order) to each backend configuration, with no cache and one attempt, and
   reports per task and configuration: output tokens per second, valid answers per minute
   (schema-valid JSON that did not fall into a loop), and for llama.cpp how many answers
   are byte-identical to its first configuration's (one-slot servers should give all).

Configurations (``--configs``, comma-separated; all by default):
``torch-t{1,2}-b{1,16}``: curll's PyTorch decode loop (transformers backend, the GGUF
converted to float32) with 1 or 2 threads, 1 or 16 rows decoded together;
``llamacpp-s{S}-t{T}-p{P}``: S llama.cpp servers of T threads and P slots each, serving the
default GGUF file (``llamacpp-...@FILE``: another file).

    python -m bench.llm_backends capture --out /tmp/requests.jsonl
    python -m bench.llm_backends replay --requests /tmp/requests.jsonl --per-task 12
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
import time
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

from curll.llm.types import ChatRequest, Message
from curll.sampling import Sampling

ROOT = Path(__file__).resolve().parents[1]
LLM_STAGES = ["skill_graph", "templates", "generate", "split", "evaluate_judge"]
CONFIGS = ["torch-t1-b1", "torch-t2-b1", "torch-t1-b16", "torch-t2-b16", "llamacpp-s1-t1-p1",
           "llamacpp-s1-t2-p1", "llamacpp-s2-t1-p1", "llamacpp-s1-t1-p4", "llamacpp-s1-t2-p4"]  # fmt: skip


def capture(project: Path, out: Path) -> dict[str, int]:
    """Record every task's first-attempt requests of ``project``'s LLM stages (answered from its cache)."""
    from curll.llm import engine as engine_module
    from pipeline.tools.cli import load_checked

    work = Path(tempfile.mkdtemp(prefix="curll-capture-"))
    for name in ("params.yaml", "prompts", "data", ".curll/cache/llm.sqlite"):
        src, dst = project / name, work / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dst)
    captured: dict[str, list[ChatRequest]] = defaultdict(list)
    original = engine_module.Engine.run

    def recording(self: Any, requests: Any, check: Any = None, attempts: Any = None, label: str = "") -> Any:
        results = original(self, requests, check, attempts, label)
        captured[label or self.desc].extend(requests)
        sent = self.usage[-1].sent
        if sent:
            print(f"warning: {label}: {sent} requests were not in the cache (another project state?)")
        return results

    engine_module.Engine.run = recording  # type: ignore[method-assign]
    here = Path.cwd()
    try:
        os.chdir(work)
        params = load_checked(Path("params.yaml"))
        for stage in LLM_STAGES:
            module = __import__(f"pipeline.{stage}", fromlist=["run"])
            for item in params.evaluate.judges if stage == "evaluate_judge" else [None]:
                module.run(params, *([item] if item else []))
    finally:
        os.chdir(here)
        engine_module.Engine.run = original  # type: ignore[method-assign]
        shutil.rmtree(work, ignore_errors=True)
    with out.open("w") as f:
        for label, requests in captured.items():
            for r in requests:
                f.write(json.dumps({"task": label, **asdict(r)}) + "\n")
    return {label: len(r) for label, r in captured.items()}


def load_requests(path: Path) -> dict[str, list[ChatRequest]]:
    tasks: dict[str, list[ChatRequest]] = defaultdict(list)
    for line in path.read_text().splitlines():
        d = json.loads(line)
        tasks[d["task"]].append(
            ChatRequest(
                messages=tuple(Message(**m) for m in d["messages"]),
                sampling=Sampling(**d["sampling"]),
                schema_json=d["schema_json"],
                prompt_version=d["prompt_version"],
            )
        )
    return tasks


def make_backend(config: str, torch_model: Path) -> Any:
    """The backend a configuration name describes (see the module docstring)."""
    from curll.config import load_params
    from curll.llm.sources import gguf_source

    if m := re.fullmatch(r"torch-t(\d+)-b(\d+)", config):
        from curll.llm.transformers_backend import TransformersBackend

        return TransformersBackend(str(torch_model), name="smollm2-135m-instruct", device="cpu",
                                   dtype="float32", threads=int(m[1]), max_batch=int(m[2]))  # fmt: skip
    if m := re.fullmatch(r"llamacpp-s(\d+)-t(\d+)-p(\d+)(?:@(.+))?", config):
        from curll.llm.llamacpp_backend import LlamaCppBackend

        path, sha256 = gguf_source("smollm2-135m-instruct", load_params(ROOT / "params.yaml").llm_models)
        if m[4]:  # another GGUF file of the model (another quantisation)
            path, sha256 = Path(m[4]), None
        return LlamaCppBackend(path, name="smollm2-135m-instruct", sha256=sha256, servers=int(m[1]),
                               threads=int(m[2]), parallel=int(m[3]))  # fmt: skip
    raise SystemExit(f"unknown configuration {config!r}")


def torch_folder(scratch: Path) -> Path:
    """SmolLM2 converted to a Hugging Face folder (the llm_models stage's conversion)."""
    from curll.config import load_params
    from curll.llm.local import build_local_model

    folder = scratch / "smollm2-135m-instruct"
    if not (folder / "config.json").is_file():
        spec = load_params(ROOT / "params.yaml").llm_models.builtin["smollm2-135m-instruct"]
        build_local_model("smollm2-135m-instruct", spec, folder)
    return folder


def replay(tasks: dict[str, list[ChatRequest]], configs: list[str], per_task: int, scratch: Path) -> Any:
    from curll.llm.engine import Engine

    report: dict[str, Any] = {}
    first_texts: dict[str, dict[str, list[str]]] = {}  # backend family -> task -> texts
    for config in configs:
        backend = make_backend(config, torch_folder(scratch) if config.startswith("torch") else scratch)
        family = config.split("-")[0]
        rows: dict[str, Any] = {}
        for label, requests in tasks.items():
            sample = requests[:per_task]
            engine = Engine(backend, None, attempts=1, batch_size=len(sample), progress=False)
            if label == next(iter(tasks)):
                engine.run(sample[:1])  # warm up: servers start, grammars compile, weights load
            start = time.perf_counter()
            results = engine.run(sample, label=label)
            seconds = time.perf_counter() - start
            tokens = engine.usage[-1].completion_tokens
            ok = sum(r.status == "ok" for r in results)
            texts = [r.text for r in results]
            ref = first_texts.setdefault(family, {}).setdefault(label, texts)
            rows[label] = {"requests": len(sample), "tokens": tokens, "seconds": round(seconds, 1),
                           "tokens_per_s": round(tokens / seconds, 1), "ok": ok,
                           "ok_per_min": round(60 * ok / seconds, 1),
                           "identical": sum(a == b for a, b in zip(ref, texts, strict=True))}  # fmt: skip
            print(f"{config:20} {label:12} {json.dumps(rows[label])}", flush=True)
        close = getattr(backend, "close", None)
        if close:
            close()
        total_tokens = sum(r["tokens"] for r in rows.values())
        total_s = sum(r["seconds"] for r in rows.values())
        total_ok = sum(r["ok"] for r in rows.values())
        rows["all"] = {"tokens": total_tokens, "seconds": round(total_s, 1),
                       "tokens_per_s": round(total_tokens / total_s, 1), "ok": total_ok,
                       "ok_per_min": round(60 * total_ok / total_s, 1),
                       "identical": sum(r["identical"] for r in rows.values()),
                       "requests": sum(r["requests"] for r in rows.values())}  # fmt: skip
        print(f"{config:20} {'all':12} {json.dumps(rows['all'])}", flush=True)
        report[config] = rows
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    cap = sub.add_parser("capture", help="record the LLM stages' requests of a project that has run")
    cap.add_argument("--project", type=Path, default=ROOT)
    cap.add_argument("--out", type=Path, required=True)
    rep = sub.add_parser("replay", help="send the recorded requests to each backend configuration")
    rep.add_argument("--requests", type=Path, required=True)
    rep.add_argument("--per-task", type=int, default=12)
    rep.add_argument("--configs", default=",".join(CONFIGS))
    rep.add_argument("--out", type=Path, help="write the report as JSON here too")
    args = ap.parse_args()
    if args.cmd == "capture":
        print(json.dumps(capture(args.project.resolve(), args.out), indent=1))
        return
    scratch = Path(tempfile.mkdtemp(prefix="curll-backends-"))
    try:
        report = replay(load_requests(args.requests), args.configs.split(","), args.per_task, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
