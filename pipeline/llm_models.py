"""DVC stage ``llm_models@<profile>``: make one ``llm.profiles`` entry ready to load.

A ``foreach`` stage over ``llm.profiles``, so every LLM stage depends on the folder of the
one profile it asks (``llm.use``, ``split.rater`` or its judge) and on nothing of the others:
an edit to a profile no stage asks reruns nothing downstream, and adding a judge leaves the
other LLM stages as they are. A stage reads ``llm_models`` and its profile's ``backend`` and
``model`` (what the other keys set is read when the model is loaded, by the stages asking).

Writes ``out.dir/<profile>/`` (:func:`curll.llm.sources.profile_folder`) as one atomic step:

- ``source.json``: the profile's backend and model, whether a stage asks it (``in_use``) and,
  in use, what the backend loads; a ``llamacpp`` profile's GGUF file is checked (GGUF, and the
  sha256 params expect) and its hash recorded, so a new file reruns the stages that ask it.
- ``model/``: for a ``transformers`` or ``vllm`` profile in use whose ``model`` is an
  ``llm_models.builtin`` name, that model built (a random tiny Llama, or a GGUF converted).

A profile no stage asks is only recorded: nothing is loaded or checked, so an unused profile
whose model is not installed is no error. ``out.stats/<profile>.json`` holds the record and
the built model's summary and fingerprint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curll.artifacts import atomic_dir, write_json
from curll.config import Params
from curll.config.llm import LlamaCppProfile, TransformersProfile, VLLMProfile
from curll.config.models import GGUFModel
from curll.errors import CurllError
from curll.llm.gguf import check_gguf, checked_sha256
from curll.llm.identity import fingerprint
from curll.llm.local import build_local_model
from curll.llm.sources import built_folder, gguf_source, profile_folder
from pipeline.tools.console import say


def run(params: Params, name: str) -> None:
    models = params.llm_models
    if name not in params.llm.profiles:
        raise CurllError(f"profile '{name}' is not one of llm.profiles {sorted(params.llm.profiles)}",
                         field="llm.profiles")  # fmt: skip
    prof = params.llm.profiles[name]
    record: dict[str, Any] = {"profile": name, "backend": prof.backend, "model": prof.model}
    record["in_use"] = name in params.profiles_in_use()
    built: dict[str, Any] = {}
    folder = profile_folder(name, models)
    with atomic_dir(folder) as tmp:
        if not record["in_use"]:
            say(f"llm_models@{name}: no stage asks this profile; nothing loaded")
        elif isinstance(prof, TransformersProfile | VLLMProfile) and prof.model in models.builtin:
            spec = models.builtin[prof.model]
            target = built_folder(name, models)  # where the backends load it from
            say(f"llm_models@{name}: building {prof.model!r} ({spec.kind}) -> {target}")
            inside = tmp / target.relative_to(folder)
            built = build_local_model(prof.model, spec, inside)
            built["fingerprint"] = fingerprint(inside)
            record["loads"] = str(target)
        elif isinstance(prof, LlamaCppProfile):  # served as it is: its hash, so a new file reruns
            path, expected = gguf_source(prof.model, models)
            check_gguf(path)
            gguf = models.builtin.get(prof.model)
            # a package's file by name: its path differs by machine
            record["loads"] = (
                (f"{gguf.package}/{gguf.file}" if gguf.package else gguf.file)
                if isinstance(gguf, GGUFModel)
                else prof.model
            )
            record["sha256"] = checked_sha256(path, expected, prof.model)
        else:  # a hub id, a folder or a server's model: loaded as named
            record["loads"] = prof.model
        write_json(tmp / "source.json", record)
    write_json(Path(models.out.stats) / f"{name}.json", {**record, "built": built})
    say(f"llm_models@{name}: " + (f"built {prof.model!r}" if built else "nothing to build"))
