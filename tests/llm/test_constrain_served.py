"""``--json-mode``/``--structured`` against assay's own ``serve-model`` (a real llama-cpp-python
server process on 127.0.0.1): llama-cpp-python refuses ``response_format`` ``json_schema``
(422 ``Input should be 'text' or 'json_object'``), so assay sends the schema in its form
(``json_object`` + ``schema``) and the pairwise choice as a GBNF ``grammar``."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.llm import RunOptions, evaluate, load_model
from assay.llm.constrain import support
from assay.llm.pairwise.task import PairwiseTask
from assay.testing.pairwise import make_table

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "assay", "serve-model", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(240):
            try:
                if httpx.get(f"{base}/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None:
                pytest.fail(f"serve-model exited: {proc.stderr.read().decode()[-500:]}")  # type: ignore[union-attr]
            time.sleep(0.5)
        yield f"{base}#smollm2-135m-instruct"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_json_mode_works_against_serve_model(served, tmp_path: Path) -> None:
    assert support(load_model(served)) == "grammar"
    data = tmp_path / "data.jsonl"
    row = {
        "uid": "t",
        "query": "Where is the Eiffel Tower?",
        "prediction": "The Eiffel Tower is in Paris.",
        "context": ["It stands in Paris."],
        "groundtruth": ["The Eiffel Tower is in Paris, France."],
    }
    data.write_text(json.dumps(row) + "\n")
    out = tmp_path / "out.jsonl"
    args = ["text", "--data", str(data), "--metrics", "faithfulness,coherence", "-m", served]
    args += ["--json-mode", "--no-cache", "--quiet", "--judge-retries", "0", "--max-tokens", "400"]
    result = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    per = [json.loads(x) for x in out.read_text().splitlines()]
    per = [r for r in per if "datum_uid" in r["parameters"]]
    assert len(per) == 2
    for r in per:  # every reply parsed: no judge error (a value, or undefined by the formula)
        assert "judge error" not in str(r["parameters"].get("undefined")), r


def test_pairwise_choices_from_serve_model(served, tmp_path: Path) -> None:
    table = make_table(["quality"] * 2, {"m1": [3, 1], "ref": [2, 2]})
    task = PairwiseTask(
        table, models=["m1"], reference_model="ref", max_tokens=40, num_bootstrap=20
    )
    run = evaluate(task, served, RunOptions(cache=False))
    assert run.parameters["constraint"] == "grammar"
    assert run.paid_calls == len(run.calls) == 4
    assert all(c.parsed in ("A", "B") for c in run.calls)
