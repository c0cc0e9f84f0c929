"""One behaviour for every LLM command (the one driver, issue 20), on a real loopback server.

* bad options are refused before any call, in one line naming the command-line option;
* outputs (``--db``, ``--out-dir``) are checked before the first call is paid;
* failed calls make the run fail (exit 1, stored as failed, counts on stderr) unless
  ``--max-errors`` allows them;
* SIGINT/SIGTERM keep the calls made (stored, answers cached), print how to resume and
  exit 130/143; the same command then resumes without repeating an answered call.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
from assay.store import Store
from assay.testing.llm import FakeChatServer
from assay.testing.llm_resume import cached_responses, shell_signals
from assay.testing.pairwise import make_table, scripted_judge

TESTS = Path(__file__).resolve().parents[1]
CAT_DEV = TESTS / "suites" / "data" / "cat_dev.json"


def _answer(messages):
    text = messages[-1]["content"]
    if "Option 1:" in text:  # a CAT prompt
        return "2"
    if "<response_1>" in text:  # a pairwise prompt
        return scripted_judge()(messages)
    if '"statements": [' in text:
        return json.dumps({"statements": ["One thing."]})
    if '"claims": [' in text:  # (a verdict here would be invalid: a failed call)
        return json.dumps({"claims": ["One thing."]})
    return json.dumps({"verdicts": [{"verdict": "yes", "reason": ""}]})


@pytest.fixture
def srv():
    with FakeChatServer(responder=_answer, hang_seconds=60) as server:
        yield server


@pytest.fixture
def inputs(tmp_path):
    text = tmp_path / "text.jsonl"
    rows = [
        {"uid": f"u{i}", "query": f"Question {i}?", "prediction": f"Answer number {i}.",
         "groundtruth": ["g"], "context": ["c"]}
        for i in range(6)
    ]  # fmt: skip
    text.write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = tmp_path / "pairs.jsonl"
    make_table(["quality"] * 6, {"m1": [3] * 6, "ref": [1] * 6}).to_json(
        table, orient="records", lines=True
    )
    return {"text": text, "pairs": table}


def _cmd(name: str, spec: str, inputs: dict, tmp_path: Path) -> list[str]:
    db = ["--db", str(tmp_path / "store.db")]
    if name == "cat":
        return ["llm", "cat", "--data", str(CAT_DEV), "--model", spec, "--quiet", *db]
    if name == "text":
        return ["text", "--data", str(inputs["text"]), "--metrics", "faithfulness",
                "--model", spec, "--save", "--quiet", *db]  # fmt: skip
    return ["pairwise", "judge", "--data", str(inputs["pairs"]), "--models", "m1",
            "--reference-model", "ref", "--judge", spec, "--out-dir", str(tmp_path / "runs"),
            "--num-bootstrap", "10", "--save", "--quiet", *db]  # fmt: skip


COMMANDS = ["cat", "text", "pairwise"]


def _one_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "Usage:" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.parametrize(
    "extra, option",
    [
        (["--max-tokens", "0"], "--max-tokens"),
        (["--max-tokens", "-5"], "--max-tokens"),
        (["--max-errors", "-1"], "--max-errors"),
        (["--concurrency", "0"], "--concurrency"),
        (["--timeout", "-1"], "--timeout"),
        (["--retries", "-2"], "--retries"),
    ],
)
def test_nonsense_options_are_refused_naming_the_option(srv, inputs, tmp_path, name, extra, option):
    line = _one_line(CliRunner().invoke(app, [*_cmd(name, srv.spec(), inputs, tmp_path), *extra]))
    assert line.startswith(f"error: {option}: "), line
    assert srv.calls == 0 and not (tmp_path / "store.db").exists()


@pytest.mark.parametrize("name", COMMANDS)
def test_a_model_url_without_host_is_refused(srv, inputs, tmp_path, name):
    line = _one_line(CliRunner().invoke(app, _cmd(name, "http://#m", inputs, tmp_path)))
    assert "needs a host" in line and srv.calls == 0


def test_dry_run_of_a_negative_count_is_refused(srv, tmp_path):
    args = ["llm", "cat", "--data", str(CAT_DEV), "--model", srv.spec(), "--dry-run", "-1"]
    line = _one_line(CliRunner().invoke(app, args))
    assert "--dry-run: must be >= 0" in line and srv.calls == 0


@pytest.mark.parametrize("name", COMMANDS)
def test_an_unusable_store_fails_before_any_call(srv, inputs, tmp_path, name):
    args = _cmd(name, srv.spec(), inputs, tmp_path)
    args[args.index("--db") + 1] = str(tmp_path)  # a folder is not a SQLite file
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert srv.calls == 0


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--num-bootstrap", "-1"], "--num-bootstrap: must be from 2 to 100,000"),
        (["--ci", "1.5"], "--ci: must be a confidence level in (0, 1)"),
        (["--out-dir", "FILE"], "--out-dir: "),
    ],
)
def test_pairwise_checks_its_outputs_before_paying(srv, inputs, tmp_path, extra, needle):
    (tmp_path / "afile").write_text("x")
    extra = [str(tmp_path / "afile" / "sub") if e == "FILE" else e for e in extra]
    line = _one_line(CliRunner().invoke(app, [*_cmd("pairwise", srv.spec(), inputs, tmp_path),
                                             *extra]))  # fmt: skip
    assert needle in line and srv.calls == 0


def _kind(name: str) -> str:
    return {"cat": "llm_cat", "text": "text", "pairwise": "pairwise"}[name]


@pytest.mark.parametrize("name", COMMANDS)
def test_failed_calls_fail_the_run_unless_allowed(srv, inputs, tmp_path, name):
    first = {"cat": "Option 1:", "text": "Answer number 0.", "pairwise": "Question 0 "}[name]

    class Plan(dict):
        def get(self, prompt, default=None):
            return ["400"] if first in prompt and "u1" not in prompt else default

    srv.plan = Plan()
    base = [*_cmd(name, srv.spec(), inputs, tmp_path), "--no-cache", "--retries", "0"]
    result = CliRunner().invoke(app, base)
    assert result.exit_code == 1, result.output
    assert "calls failed (allowed: 0, --max-errors)" in result.stderr
    allowed = CliRunner().invoke(app, [*base, "--max-errors", "1000"])
    assert allowed.exit_code == 0, allowed.output
    assert "allowed by --max-errors" in allowed.stderr
    with Store(str(tmp_path / "store.db")) as store:
        runs = sorted(store.list(kind=_kind(name)), key=lambda e: e.id)
    assert [e.status for e in runs] == ["failed", "finished"]
    assert "calls failed" in (runs[0].error or "")


def _interrupt(cmd: list[str], cache: Path, answered: int, signum: int) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", *cmd],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=shell_signals,
    )
    try:
        deadline = time.monotonic() + 90
        while cached_responses(cache) < answered:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the answered calls were never cached"
            time.sleep(0.05)
        time.sleep(0.2)
        os.kill(proc.pid, signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err.decode()


@pytest.mark.parametrize(
    "name, signum", [("cat", signal.SIGINT), ("text", signal.SIGTERM), ("pairwise", signal.SIGINT)]
)
def test_interrupt_stores_the_calls_made_and_the_same_command_resumes(
    srv, inputs, tmp_path, name, signum
):
    cache = tmp_path / "cache.sqlite"
    answered = 3
    srv.answer_limit = answered
    cmd = [*_cmd(name, srv.spec(), inputs, tmp_path), "--cache", str(cache), "-c", "2"]
    code, err = _interrupt(cmd, cache, answered, signum)
    assert code == 128 + signum, err
    assert "Run the same command again to resume" in err and "Traceback" not in err
    with Store(str(tmp_path / "store.db")) as store:
        (ev,) = store.list(kind=_kind(name))
        full = store.get(ev.id, items=True)
    assert full.status == "failed" and "interrupted" in (full.error or "")
    kinds = [i.error_kind for i in full.items or []]
    assert sum(i.ok for i in full.items or []) == answered and "interrupted" in kinds
    paid = {p for p, outcome in srv.log if outcome == "ok"}
    srv.answer_limit = None
    srv.reset()
    result = CliRunner().invoke(app, cmd)
    assert result.exit_code == 0, result.output
    again = {p for p, outcome in srv.log if outcome == "ok"}
    assert paid and not paid & again  # no answered call is paid twice
