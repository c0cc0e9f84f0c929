"""`assay serve-model` + `--loglik completions`, the README's pair, on the real embedded model.

llama-cpp-python's server scores one prompt per ``/v1/completions`` request; assay sends every
option of an item as one list. serve-model answers a list prompt by prompt (each choice equal
to that prompt's own answer), so the README's command runs; and a failed call always stores
the server's status and body (the server's 500 came with an empty message).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.llm.models.embedded import EMBEDDED_NAME
from assay.store import Store
from assay.testing.llm import FakeChatServer


@pytest.fixture(scope="module")
def served():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve-model", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _post(url: str, body: dict) -> dict:
    req = urllib.request.Request(
        url + "/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())


@pytest.mark.slow
def test_a_list_of_prompts_is_answered_prompt_by_prompt(served):
    prompts = ["The capital of France is Paris", "The capital of France is Rome"]
    body = {"model": EMBEDDED_NAME, "echo": True, "logprobs": 1, "max_tokens": 1,
            "temperature": 0}  # fmt: skip
    joined = _post(served, {**body, "prompt": prompts})
    assert [c["index"] for c in joined["choices"]] == [0, 1]
    for i, p in enumerate(prompts):
        alone = _post(served, {**body, "prompt": p})["choices"][0]
        assert joined["choices"][i]["logprobs"] == alone["logprobs"]
    assert joined["usage"]["prompt_tokens"] > 10


@pytest.mark.slow
def test_readme_loglik_completions_command_runs_against_serve_model(served, tmp_path):
    db = tmp_path / "s.db"
    argv = ["llm", "cat", "--sample", "--max-queries", "2", "-c", "1", "--timeout", "600",
            "--model", f"{served}#{EMBEDDED_NAME}", "--loglik", "completions",
            "--no-cache", "--quiet", "--db", str(db)]  # fmt: skip
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, res.output
    records = json.loads(res.stdout)
    (err,) = [r for r in records if r["type"] == "ErrorRate"]
    assert err["value"] == 0.0 and err["parameters"]["calls"] >= 2
    with Store(str(db)) as store:
        (ev,) = store.list()
        items = store.get(ev.id, items=True).items or []
    assert ev.status == "finished" and items and all(i.ok for i in items)
    for i in items:  # every option scored by the served model (finite log-likelihoods)
        options = json.loads(i.raw_answer)["options"]
        assert len(options) >= 2 and all(o["logprob"] < 0 for o in options)


def test_a_failed_call_stores_the_status_and_the_body(tmp_path):
    with FakeChatServer(plan={}) as srv:

        class Plan(dict):
            def get(self, prompt, default=None):
                return ["500"] * 10

        srv.plan = Plan()
        db = tmp_path / "s.db"
        argv = ["llm", "cat", "--sample", "--max-queries", "1", "--model", srv.spec(),
                "--retries", "0", "--no-cache", "--quiet", "--db", str(db)]  # fmt: skip
        res = CliRunner().invoke(app, argv)
    assert res.exit_code == 1, res.output
    with Store(str(db)) as store:
        (ev,) = store.list()
        items = store.get(ev.id, items=True).items or []
    assert items and all(not i.ok for i in items)
    for i in items:
        assert "HTTP 500: " in i.error and '"injected 500"' in i.error, i.error
