"""An API key never reaches a file: a server stage run through DVC with a key set, against a
server that echoes the key in its errors (as OpenAI does), leaves no trace of it in the
project, ``.dvc/`` (cache included), ``.curll/``, ``dvc.lock``, ``data/`` or the output."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from bench.harness.commands import dvc
from bench.harness.mix import FaultyServer
from bench.harness.project import make_project, under_dvc

KEY = "sk-test-5f3c9a0e77d24b1c8e6a0d13"  # a made-up key in the OpenAI format


def text_of(path: Path) -> bytes:
    """A file's bytes; a parquet file's (compressed: its bytes hide strings) decoded cells."""
    raw = path.read_bytes()
    if raw[:4] == b"PAR1":  # also DVC's cache copies, which have no suffix
        return pd.read_parquet(path).to_json().encode()
    return raw


def hits(root: Path, secret: str) -> list[str]:
    """Files under ``root`` whose content holds ``secret``."""
    needle = secret.encode()
    return [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle in text_of(p)]


def test_a_key_the_server_echoes_is_found_nowhere(tmp_path, monkeypatch):
    monkeypatch.setenv("CURLL_API_KEY", KEY)  # the server profile's api_key_env
    with FaultyServer(rate=0.0) as server:
        project = make_project(tmp_path / "p", server.base_url)
        under_dvc(project)
        # every attempt of the requests about indicator "(0)" is refused: stored rejects
        server.pick = lambda body: "401-echo" if "order (0)" in json.dumps(body["messages"]) else "ok"
        proc = dvc("repro", cwd=project)
        assert all(h.get("authorization") == f"Bearer {KEY}" for h in server.headers)  # it was sent
    shard = next((project / "data" / "generate" / "shards").glob("*.parquet"))
    assert b"Incorrect API key provided: ***" in text_of(shard)  # the reject is stored, redacted
    assert (project / "dvc.lock").is_file() and (project / ".curll").is_dir()
    assert hits(project, "Incorrect API key provided") != []  # the search sees the stored errors
    assert hits(project, KEY) == [] and hits(project, KEY[-12:]) == []
    assert KEY not in proc.stdout + proc.stderr
