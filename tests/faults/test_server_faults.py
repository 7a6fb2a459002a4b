"""The generate stage against a server that fails a seeded share of HTTP calls: 429 with
Retry-After, 500, 503, 400, answers past the timeout, truncated bodies, content that is not
JSON and JSON that matches no schema. ``bench/faults.py`` prints the same at more rates."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from curll.yamlio import dump_yaml, load_yaml
from harness.mix import FaultyServer
from harness.project import make_project, run_generate

SHARD = "data/generate/shards/generations-0000-of-0001.parquet"


def test_no_faults_one_call_per_request(tmp_path):
    with FaultyServer(rate=0.0) as server:
        project = make_project(tmp_path / "p", server.base_url)
        run = run_generate(project)
        assert run.returncode == 0, run.output
        assert run.requests == run.ok == 16 and run.retries == 0
        assert len(server.requests) == 16  # one HTTP call each


def test_ten_percent_faults_cost_retries_only_and_a_rerun_asks_nothing(tmp_path):
    with FaultyServer(rate=0.1, seed=3) as server:
        project = make_project(tmp_path / "p", server.base_url)
        run = run_generate(project)
        assert run.returncode == 0, run.output
        assert run.ok == run.requests == 16  # every request answered
        faults = sum(n for action, n in server.mix.drawn.items() if action != "ok")
        assert faults > 0 and len(server.requests) == 16 + faults  # each fault cost one more call
        first = pd.read_parquet(project / SHARD)
        calls = len(server.requests)

        again = run_generate(project)
        assert again.returncode == 0 and again.sent == 0
        assert len(server.requests) == calls  # the server is asked nothing it already answered
        pd.testing.assert_frame_equal(pd.read_parquet(project / SHARD), first)


def test_every_call_failing_stops_the_stage_with_the_reason(tmp_path):
    with FaultyServer(rate=1.0, seed=1) as server:
        project = make_project(tmp_path / "p", server.base_url, max_retries=1)
        run = run_generate(project)
    assert run.returncode == 2 and "Traceback" not in run.output
    # server errors, rate limits and broken bodies may pass: the stage stops without keeping them
    assert "failed in a way that may pass" in run.output and "run the stage again" in run.output
    assert not (project / SHARD).exists()


@pytest.mark.parametrize(("fault", "seeds"), [("400", [42, 43]), ("429", [42] * 5)])
def test_a_client_error_is_final_and_a_transient_one_is_retried(tmp_path, fault, seeds):
    """A 400 is final: the engine's next attempt (seed + 1) follows at once; a 429 is retried
    by the backend with the same request and seed (max_retries 4: four 429s, then the answer),
    never moved on to the next attempt (past the retries the stage stops: the spell test below).
    (401, 503 and the others: tests/llm/test_openai_backend.py.)"""
    with FaultyServer(rate=0.0) as server:
        project = make_project(tmp_path / "p", server.base_url, n_seeds=1)
        server.script.extend([fault] * (len(seeds) - 1))
        run = run_generate(project)
        assert run.returncode == 0, run.output
        assert [r["seed"] for r in server.requests[: len(seeds)]] == seeds
        assert len(server.requests) == 4 + len(seeds) - 1  # context, IR, CQA, CSQA + the faults


@pytest.mark.parametrize("fault", ["500", "content-null"])
def test_a_spell_of_server_failures_stops_the_stage_and_the_rerun_asks_only_those(tmp_path, fault):
    """Failures that may pass (a 500 past every retry; a body with null content, as a reasoning
    parser sends) are no answers: the stage stops, storing none of them, so DVC records nothing
    and the next run asks only those requests, once the server is well again."""
    with FaultyServer(rate=0.0) as server:
        project = make_project(tmp_path / "p", server.base_url, max_retries=1)
        server.pick = lambda body: fault if "order (0)" in json.dumps(body["messages"]) else "ok"
        run = run_generate(project)
        assert run.returncode == 2 and "failed in a way that may pass" in run.output, run.output
        assert not (project / SHARD).exists()
        spell = len(server.requests)
        server.pick = lambda body: "ok"  # the server is well again
        again = run_generate(project)
        assert again.returncode == 0, again.output
        rows = pd.read_parquet(project / SHARD)
        assert (rows["status"] == "ok").all() and len(rows) == 16
        failed = {
            json.dumps(r["messages"])
            for r in server.requests[:spell]
            if "order (0)" in json.dumps(r["messages"])
        }
        asked = [json.dumps(r["messages"]) for r in server.requests[spell:]]
        assert failed and set(asked) >= failed  # asked again ...
        answered_before = {json.dumps(r["messages"]) for r in server.requests[:spell]} - failed
        assert not answered_before & set(asked)  # ... and nothing that was answered


def test_a_refusal_is_kept_as_the_models_reject_not_asked_again_forever(tmp_path):
    with FaultyServer(rate=0.0) as server:
        project = make_project(tmp_path / "p", server.base_url, max_retries=3)
        server.pick = lambda body: "refusal" if "order (0)" in json.dumps(body["messages"]) else "ok"
        run = run_generate(project)
        refused = [r for r in server.requests if "order (0)" in json.dumps(r["messages"])]
    assert run.returncode == 0, run.output
    # not retried by the backend: each of the engine's attempts (a new seed each) asks once
    asked = [(json.dumps(r["messages"]), r["seed"]) for r in refused]
    assert refused and len(set(asked)) == len(asked)
    rows = pd.read_parquet(project / SHARD)
    assert rows.loc[rows["status"] == "reject", "reason"].str.contains("the model refused").any()


def test_with_failures_reject_a_request_the_server_keeps_failing_is_kept_as_a_reject(tmp_path):
    """The way out when the same request fails at every run: ``llm.failures: reject``."""

    with FaultyServer(rate=0.0) as server:
        project = make_project(tmp_path / "p", server.base_url, max_retries=1)
        params = load_yaml(project / "params.yaml")
        params["llm"]["failures"] = "reject"
        dump_yaml(params, project / "params.yaml")
        server.pick = lambda body: "500" if "order (0)" in json.dumps(body["messages"]) else "ok"
        run = run_generate(project)
    assert run.returncode == 0, run.output
    rows = pd.read_parquet(project / SHARD)
    assert rows.loc[rows["status"] == "reject", "reason"].str.startswith("InternalServerError").any()


def test_a_shard_whose_requests_may_pass_stops_only_itself_and_the_run_says_which(tmp_path):

    from curll.generate.shard import shard_of
    from harness.project import seeds

    table = seeds(4)
    ir = table[table["type"] == "ir"]
    part = next(t for s, t in zip(ir["seed_id"], ir["template"], strict=True) if shard_of(s, 2) == 0)
    with FaultyServer(rate=0.0) as server:
        project = make_project(tmp_path / "p", server.base_url, max_retries=1)
        params = load_yaml(project / "params.yaml")
        params["generate"]["shards"] = 2
        dump_yaml(params, project / "params.yaml")
        server.pick = lambda body: "500" if part in json.dumps(body["messages"]) else "ok"
        run = run_generate(project)
    assert run.returncode == 2 and "shard 0/2: 1 request(s)" in run.output, run.output
    shards = project / "data" / "generate" / "shards"
    assert not (shards / "generations-0000-of-0002.parquet").exists()
    assert (shards / "generations-0001-of-0002.parquet").exists()  # the other shard ran and was kept
