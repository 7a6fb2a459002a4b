"""An API key never reaches a file: a server stage run through DVC with a key set, against a
server that echoes the key in its errors (as OpenAI does), leaves no trace of it in the
project, ``.dvc/`` (cache included), ``.curll/``, ``dvc.lock``, ``data/`` or the output; and
params that hold a credential in a URL (which DVC would copy into ``dvc.lock``) do not load,
with an error that does not show it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from curll.config import parse_params
from curll.errors import CurllError
from curll.yamlio import load_yaml
from harness.commands import dvc
from harness.mix import FaultyServer
from harness.project import make_project, under_dvc

ROOT = Path(__file__).resolve().parents[2]
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
        # every attempt of the requests about indicator "(0)" is refused as invalid: stored rejects
        server.pick = lambda body: "400-echo" if "order (0)" in json.dumps(body["messages"]) else "ok"
        proc = dvc("repro", cwd=project)
        assert all(h.get("authorization") == f"Bearer {KEY}" for h in server.headers)  # it was sent
        shard = next((project / "data" / "generate" / "shards").glob("*.parquet"))
        assert b"Incorrect API key provided: ***" in text_of(shard)  # the reject is stored, redacted
        assert (project / "dvc.lock").is_file() and (project / ".curll").is_dir()
        assert hits(project, "Incorrect API key provided") != []  # the search sees the stored errors
        # a server error that may pass stops the stage (nothing stored), its message redacted
        server.pick = lambda body: "500-echo" if "order (0)" in json.dumps(body["messages"]) else "ok"
        failed = dvc("repro", "-f", "-s", "generate", cwd=project, check=False)
        # a refused key stops the stage, its message redacted too
        server.pick = lambda body: "401-echo"
        refused = dvc("repro", "-f", "-s", "generate", cwd=project, check=False)
    assert failed.returncode != 0 and "failed in a way that may pass" in failed.stderr
    assert refused.returncode != 0 and "refused the key (HTTP 401: " in refused.stderr
    assert "Incorrect API key provided: ***" in refused.stderr + failed.stderr
    assert hits(project, KEY) == [] and hits(project, KEY[-12:]) == []
    assert all(KEY not in p.stdout + p.stderr for p in (proc, failed, refused))


SECRET = "s3cr3t-9f2b7c"


@pytest.fixture
def good() -> dict[str, Any]:
    data: dict[str, Any] = load_yaml(ROOT / "params.yaml")
    return data


@pytest.mark.parametrize(
    "url",
    [
        f"http://user:{SECRET}@127.0.0.1:8000/v1",
        f"https://{SECRET}@api.example.com/v1",  # a key as the user name
        f"http://user:{SECRET}@[::1]:8000/v1",
        f"https://api.example.com/v1?api_key={SECRET}",
        f"https://api.example.com/v1?model=m&API-KEY={SECRET}",
        f"https://api.example.com/v1?key={SECRET}",
        f"https://api.example.com/v1?access_token={SECRET}",
        f"https://api.example.com/v1?sig={SECRET}",
        f"https://api.example.com/v1?Signature={SECRET}",
        f"https://api.example.com/v1?password={SECRET}",
        f"https://api.example.com/v1?subscription-key={SECRET}",
        f"user:{SECRET}@api.example.com/v1",  # no scheme
        f"//user:{SECRET}@api.example.com/v1",  # scheme-relative
        f"https://api.example.com/v1#access_token={SECRET}",  # in the fragment
        f"https://api.example.com/v1?apiKey={SECRET}",
        f"https://bucket.example.com/v1?X-Amz-Security-Token={SECRET}",
        f"https://api.example.com/v1?Ocp-Apim-Subscription-Key={SECRET}",
        f"https://api.example.com/v1?hf_token={SECRET}",  # key and token beside any other word
        f"https://api.example.com/v1?openai_api_key={SECRET}",
        f"https://api.example.com/v1?personal_access_token={SECRET}",
        f"https://api.example.com/v1?api_key_2={SECRET}",
        f"user:{SECRET}@api.example.com/v1?next=https://x.example.com",  # a :// later is no scheme
    ],
)
def test_a_credential_in_base_url_is_refused_without_printing_it(good, url):
    """DVC copies every param into dvc.lock, its run cache and the dataset card: a key in a URL
    param would be written there. Params with one do not load, and the error does not show it."""
    data = copy.deepcopy(good)
    data["llm"]["profiles"]["server"]["base_url"] = url
    with pytest.raises(CurllError) as err:
        parse_params(data, source="params.yaml")
    text = str(err.value)
    assert err.value.field == "llm.profiles.server.base_url"
    assert "api_key_env" in text and "\n" not in text
    assert SECRET not in text and url not in text


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "https://api.example.com/v1?model=m&monkey=1",
        "http://[::1]:8000/v1",
        "http://host/v1/@models",
        "https://api.example.com/v1?sort_key=a&page_token=b&next_token=c",  # keys that are no secret
        "https://api.example.com/v1?keyword=x#section-2",
    ],  # an @ in the path is no user info
)
def test_a_url_without_credentials_loads(good, url):
    data = copy.deepcopy(good)
    data["llm"]["profiles"]["server"]["base_url"] = url
    assert parse_params(data).llm.profiles["server"].base_url == url  # type: ignore[union-attr]


def test_a_credential_in_ray_address_is_refused_without_printing_it(good):
    data = copy.deepcopy(good)
    data["generate"]["ray_address"] = f"ray://admin:{SECRET}@head:10001"
    with pytest.raises(CurllError) as err:
        parse_params(data, source="params.yaml")
    assert err.value.field == "generate.ray_address"
    assert SECRET not in str(err.value) and "\n" not in str(err.value)
    for ok in ("auto", "ray://head:10001", "10.0.0.1:6379"):
        data["generate"]["ray_address"] = ok
        assert parse_params(data).generate.ray_address == ok
