"""Kill-and-resume: a run SIGKILLed after N answered calls re-runs with exactly total - N calls."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest


def _cached(path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(str(path), timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:  # table not created yet
        return 0


@pytest.mark.parametrize("concurrency", [4])
def test_sigkill_then_rerun_repeats_no_answered_call(chat_server, tmp_path, concurrency):
    total, answered_before_kill = 30, 12
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(json.dumps({"id": f"q{i}", "prompt": f"question {i}"}) + "\n" for i in range(total))
    )
    cache = tmp_path / "cache.sqlite"
    out = tmp_path / "out.jsonl"
    srv = chat_server(answer_limit=answered_before_kill, hang_seconds=60)
    cmd = [
        sys.executable,
        "-m",
        "assay.cli",
        "llm",
        "run",
        str(items),
        "--model",
        srv.spec(),
        "--cache",
        str(cache),
        "--out",
        str(out),
        "--concurrency",
        str(concurrency),
        "--timeout",
        "60",
        "--quiet",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        # The server answers N calls and then holds every further one; wait until the
        # client has cached all N answers, then kill it mid-run.
        while _cached(cache) < answered_before_kill:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "client never cached the answered calls"
            time.sleep(0.05)
        assert srv.answered == answered_before_kill
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()  # killed before writing its output
    assert _cached(cache) == answered_before_kill

    srv.answer_limit = None
    srv.reset()
    done = subprocess.run(cmd, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert srv.calls == total - answered_before_kill
    # every call of the re-run was for an item not answered before
    assert all(n == 1 for n in srv.per_prompt.values())
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in records] == [f"q{i}" for i in range(total)]
    assert all(r["ok"] and r["text"] == f"echo: question {i}" for i, r in enumerate(records))
    assert sum(r["cached"] for r in records) == answered_before_kill
    assert _cached(cache) == total
