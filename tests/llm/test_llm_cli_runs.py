"""``assay llm run`` end to end against the loopback server: file modes, stored times,
credentials in the model URL, and a clean stop on SIGINT/SIGTERM with resume."""

from __future__ import annotations

import base64
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
from assay.cli.support import emit
from assay.results import Metric, MetricSet
from assay.store import Store
from assay.testing.llm_resume import shell_signals

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _items(path: Path, n: int) -> Path:
    path.write_text(
        "".join(json.dumps({"id": f"q{i}", "prompt": f"p{i}"}) + "\n" for i in range(n))
    )
    return path


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_files_assay_writes_honour_the_umask(tmp_path, chat_server, umask_022):
    srv = chat_server()
    db = tmp_path / "s.db"
    out = tmp_path / "recs.jsonl"
    argv = ["llm", "run", str(_items(tmp_path / "i.jsonl", 3)), "-m", srv.spec(), "-q"]
    res = CliRunner().invoke(app, [*argv, "--out", str(out), "--save", "--db", str(db)])
    assert res.exit_code == 0, res.output
    exported = tmp_path / "export" / "runs.csv"
    exported.parent.mkdir()  # --out never creates folders (issue 37 item 9)
    res = CliRunner().invoke(
        app, ["runs", "export", "--db", str(db), "-f", "csv", "-o", str(exported)]
    )
    assert res.exit_code == 0, res.output
    metrics_out = tmp_path / "m.json"
    emit(MetricSet([Metric("Accuracy", 1.0)]), out=metrics_out)  # every metric command's --out
    for p in (out, exported, metrics_out):
        assert p.stat().st_mode & 0o777 == 0o644, (p, oct(p.stat().st_mode))
    assert len(out.read_text().splitlines()) == 3


def test_stored_llm_run_has_its_start_as_created(tmp_path, chat_server):
    srv = chat_server(latency=0.3)
    db = tmp_path / "s.db"
    argv = ["llm", "run", str(_items(tmp_path / "i.jsonl", 2)), "-m", srv.spec(), "-q", "-c", "1"]
    res = CliRunner().invoke(app, [*argv, "--save", "--db", str(db), "--no-cache"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["runs", "show", "1", "--db", str(db)])
    ev = json.loads(res.output)
    from datetime import datetime

    created, finished = (datetime.fromisoformat(ev[k]) for k in ("created", "finished"))
    assert (finished - created).total_seconds() >= 0.55  # two calls of 0.3 s, one at a time
    assert ev["status"] == "finished" and len(ev["metrics"]) == 6


def test_credentials_in_the_model_url_work_and_are_never_shown(tmp_path, chat_server):
    srv = chat_server()
    spec = srv.spec().replace("http://", "http://user:s3cret@")
    db = tmp_path / "s.db"
    out = tmp_path / "recs.jsonl"
    argv = ["llm", "run", str(_items(tmp_path / "i.jsonl", 2)), "-m", spec, "-q", "--no-cache"]
    res = CliRunner().invoke(app, [*argv, "--out", str(out), "--save", "--db", str(db)])
    assert res.exit_code == 0, res.output
    expected = "Basic " + base64.b64encode(b"user:s3cret").decode()
    assert srv.authorizations == [expected, expected]
    shown = [res.output, out.read_text(), db.read_bytes().decode("latin-1")]
    for argv in (
        ["list"],
        ["show", "1", "--items"],
        ["export", "1", "--items"],
        ["list", "-f", "table"],
    ):
        r = CliRunner().invoke(app, ["runs", *argv, "--db", str(db)])
        assert r.exit_code == 0, r.output
        shown.append(r.output)
    assert all("s3cret" not in text for text in shown)
    assert "user:***@127.0.0.1" in shown[3]
    with Store(str(db)) as st:
        assert st.get(1).model == spec.replace("s3cret", "***")
    res = CliRunner().invoke(app, ["llm", "ask", "-m", spec, "hi"])
    assert res.exit_code == 0 and "echo: hi\n" in res.output and "s3cret" not in res.output


@pytest.mark.slow
@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_run_writes_what_it_has_and_resumes(tmp_path, chat_server, sig, code):
    n, first = 12, 5
    srv = chat_server(answer_limit=first, hang_seconds=60.0)
    items = _items(tmp_path / "items.jsonl", n)
    out = tmp_path / "out.jsonl"
    cache = tmp_path / "c.sqlite"
    args = f"llm run {items} -m {srv.spec()} --out {out} --cache {cache} -q -c 2".split()
    cmd = [sys.executable, "-m", "assay", *args]
    env = {**os.environ, "PYTHONPATH": SRC, "ASSAY_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=shell_signals,  # Ctrl-C as from a shell, whatever this worker has
    )
    deadline = time.monotonic() + 60
    while srv.answered < first or srv.calls < first + 2:  # 5 answered, 2 hanging in flight
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    time.sleep(0.3)  # the answers reach the client and its cache
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr and "resume" in stderr and f"{first} of {n}" in stderr
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in recs] == [f"q{i}" for i in range(n)]
    assert sum(r["ok"] for r in recs) == first
    assert {r["error_kind"] for r in recs if not r["ok"]} == {"interrupted"}
    # resume: only the unfinished items are called again
    srv.answer_limit = None
    srv.reset()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert srv.calls == n - first
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(r["ok"] for r in recs) and sum(r["cached"] for r in recs) == first
