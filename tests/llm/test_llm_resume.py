"""Kill-and-resume: a run SIGKILLed after N answered calls re-runs with exactly total - N calls."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from assay.testing.llm_resume import cached_responses, kill_when_cached


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
        "assay",
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
    # The server answers N calls and then holds every further one; the run is killed once
    # the client has cached all N answers.
    assert kill_when_cached(cmd, cache, answered_before_kill) == -signal.SIGKILL
    assert srv.answered == answered_before_kill
    assert not out.exists()  # killed before writing its output
    assert cached_responses(cache) == answered_before_kill

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
    assert cached_responses(cache) == total
