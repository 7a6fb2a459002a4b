"""DVC stage ``llm_models``: build the local LLMs that the profiles in use name.

Reads ``params.llm_models`` and the profiles of ``llm.use``, ``split.rater`` and ``evaluate.judges``. Every
``transformers`` profile whose ``model`` is an ``llm_models.builtin`` name gets that model
built into ``out.dir/<name>`` (a random tiny Llama, or a GGUF file converted with its own
tokenizer); nothing else is built, so a run on llama.cpp, a server or a hub model builds
nothing. ``out.dir/profiles.json`` and ``out.stats`` record, for every profile in use, its
backend, model and what it loads; a ``llamacpp`` profile's GGUF file is checked (GGUF, and
the sha256 params expect) and its hash recorded, so the LLM stages, which depend on this
folder, rerun when the file changes. The stats add each built model's summary and
fingerprint.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from curll.artifacts import write_json
from curll.config import Params
from curll.config.llm import LlamaCppProfile
from curll.config.models import GGUFModel
from curll.llm.gguf import check_gguf, checked_sha256
from curll.llm.identity import fingerprint
from curll.llm.local import build_local_model
from curll.llm.sources import gguf_source
from pipeline.report import say


def run(params: Params) -> None:
    p = params.llm_models
    out = Path(p.out.dir)
    wanted = params.local_models()
    if out.is_dir():  # models no profile in use names any more
        for stale in out.iterdir():
            if stale.is_dir() and stale.name not in wanted:
                shutil.rmtree(stale)
    out.mkdir(parents=True, exist_ok=True)
    built: dict[str, Any] = {}
    for name in wanted:
        say(f"llm_models: building {name!r} ({p.builtin[name].kind}) -> {out / name}")
        built[name] = {**build_local_model(name, p.builtin[name], out / name), "fingerprint": ""}
        built[name]["fingerprint"] = fingerprint(out / name)
    profiles = {}
    for name in params.profiles_in_use():
        prof = params.llm.profiles[name]
        local = prof.model in wanted and prof.backend == "transformers"
        profiles[name] = {
            "backend": prof.backend,
            "model": prof.model,
            "loads": str(out / prof.model) if local else prof.model,
        }
        if isinstance(
            prof, LlamaCppProfile
        ):  # served as it is: its hash, so a new file reruns the LLM stages
            path, expected = gguf_source(prof.model, p)
            check_gguf(path)
            spec = p.builtin.get(prof.model)
            if isinstance(spec, GGUFModel):  # a package's file by name: its path differs by machine
                profiles[name]["loads"] = f"{spec.package}/{spec.file}" if spec.package else spec.file
            profiles[name]["sha256"] = checked_sha256(path, expected, prof.model)
    write_json(out / "profiles.json", profiles)  # the folder is never empty, even with nothing to build
    write_json(p.out.stats, {"profiles": profiles, "built": built})
    say(f"llm_models: {len(built)} local model(s) built: {', '.join(built) or 'none needed'}")
