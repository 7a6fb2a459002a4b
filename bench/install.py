"""The Makefile's install with uv against the same install with pip, from cold caches.

Makes two new venvs under a temporary folder. Each first gets ``torch==2.13.0`` and uv from pip
(not timed: the Makefile's first step, the same for both). Then the project with ``--extras`` is
installed, timed: by ``pip install --no-cache-dir -e`` in one, by ``uv pip install
--compile-bytecode -e`` with an empty cache in the other (what a fresh machine meets). Reports
both times and the ratio, whether both kept the torch pip put there (the CPU build), the
packages whose versions differ, and the time of a fresh process importing torch, transformers,
pandas and DVC in each venv (best of ``--repeats``: both have compiled bytecode, so it matches).

Usage: python -m bench.install [--extras dev,ray] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMPORTS = "import torch, transformers, pandas, dvc.repo; from transformers import AutoModelForCausalLM"


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def venv(path: Path) -> Path:
    """A new venv at ``path`` with torch==2.13.0 and uv (pip); its python."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    python = path / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "torch==2.13.0", "uv"], check=True,
                   stderr=subprocess.DEVNULL)  # fmt: skip
    return python


def freeze(python: Path) -> dict[str, str]:
    out = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], check=True,
                         capture_output=True, text=True).stdout  # fmt: skip
    return {p["name"].lower(): p["version"] for p in json.loads(out)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--extras", default="dev,ray")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    target = f".[{args.extras}]"
    with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
        pip_py, uv_py = venv(Path(tmp) / "pip"), venv(Path(tmp) / "uv")
        pip_s = timed([str(pip_py), "-m", "pip", "install", "-q", "--no-cache-dir", "-e", target])
        cache = str(Path(tmp) / "uv-cache")  # empty: every package downloaded, as on a new machine
        uv_s = timed([str(uv_py.parent / "uv"), "pip", "install", "-q", "--compile-bytecode",
                      "--cache-dir", cache, "--python", str(uv_py), "-e", target])  # fmt: skip
        versions = {"pip": freeze(pip_py), "uv": freeze(uv_py)}
        imports = {name: min(timed([str(py), "-c", IMPORTS]) for _ in range(args.repeats))
                   for name, py in (("pip", pip_py), ("uv", uv_py))}  # fmt: skip
    differ = {
        name: f"pip {versions['pip'].get(name, '-')}, uv {versions['uv'].get(name, '-')}"
        for name in sorted(versions["pip"].keys() | versions["uv"].keys())
        if versions["pip"].get(name) != versions["uv"].get(name) and name != "curll"
    }
    report = {
        "project": target,
        "pip_install_s": round(pip_s, 1),
        "uv_install_s": round(uv_s, 1),
        "speedup": f"{pip_s / uv_s:.2f}x",
        "torch": {name: v.get("torch") for name, v in versions.items()},
        "versions_differ": differ,
        "import_s": {name: round(s, 2) for name, s in imports.items()},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
