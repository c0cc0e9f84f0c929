"""Kill ``assay pairwise judge`` with SIGKILL mid-run; the re-run repeats no answered judge call."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from assay.testing.llm_resume import kill_when_cached
from assay.testing.pairwise import make_table


@pytest.mark.slow
def test_sigkill_then_rerun_makes_no_repeated_judge_call(judge_server, tmp_path):
    n_questions, answered_before_kill = 10, 7
    total = 2 * n_questions
    table = make_table(
        ["quality"] * n_questions, {"m1": [3] * n_questions, "ref": [1] * n_questions}
    )
    data = tmp_path / "table.jsonl"
    table.to_json(data, orient="records", lines=True)
    cache = tmp_path / "cache.sqlite"
    out_dir = tmp_path / "runs"
    srv = judge_server(answer_limit=answered_before_kill, hang_seconds=60)
    cmd = [
        sys.executable,
        "-m",
        "assay",
        "pairwise",
        "judge",
        "--data",
        str(data),
        "--models",
        "m1",
        "--reference-model",
        "ref",
        "--judge",
        srv.spec(),
        "--out-dir",
        str(out_dir),
        "--cache",
        str(cache),
        "--concurrency",
        "3",
        "--timeout",
        "60",
        "--quiet",
        "--num-bootstrap",
        "10",
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    assert kill_when_cached(cmd, cache, answered_before_kill, env=env) == -signal.SIGKILL
    assert not out_dir.exists() or not any(out_dir.iterdir())  # nothing half-written
    assert srv.answered == answered_before_kill

    srv.answer_limit = None
    srv.reset()
    done = subprocess.run(
        [*cmd, "--out", str(tmp_path / "m.json")], capture_output=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr.decode()
    assert srv.calls == total - answered_before_kill
    # Each prompt at most once, and together with the cached answers every comparison was
    # extracted: so no call answered before the kill was paid again.
    assert max(srv.per_prompt.values()) == 1
    metrics = json.loads((tmp_path / "m.json").read_text())
    ext = next(m for m in metrics if m["type"] == "ExtractionRate")
    assert ext["parameters"]["extracted"] == total
