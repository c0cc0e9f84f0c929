"""Progress off a terminal: a long run piped to a file (CI logs, ``make demo``) prints a plain
line every few seconds (done/total, errors, rate, ETA) and the summary; a short one is silent."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from assay.llm.progress import progress_line
from assay.testing.llm import FakeChatServer

_LINE = re.compile(
    r"^LLM calls: (\d+)/(\d+) done, (\d+) errors, [\d.]+ (?:calls/s|s/call), "
    r"ETA (\d+ s|\d+ min \d\d s|unknown)$"
)


def _run(srv: FakeChatServer, tmp_path: Path, n: int, interval: str) -> subprocess.CompletedProcess:
    items = tmp_path / "items.jsonl"
    rows = [{"id": i, "prompt": "boom" if i == 3 else f"q{i}"} for i in range(n)]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {**os.environ, "ASSAY_PROGRESS_INTERVAL": interval}
    cmd = [sys.executable, "-m", "assay", "llm", "run", str(items), "--model", srv.spec()]
    cmd += ["--out", str(tmp_path / "out.jsonl"), "--no-cache", "--concurrency", "1"]
    cmd += ["--max-errors", "1"]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)


def test_a_piped_run_prints_progress_lines(tmp_path) -> None:
    with FakeChatServer({"boom": ["400"]}, latency=0.1) as srv:
        proc = _run(srv, tmp_path, 20, "0.3")
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("LLM calls:")]
    assert len(lines) >= 3, proc.stderr
    parsed = [_LINE.match(ln) for ln in lines]
    assert all(parsed), lines
    done = [int(m.group(1)) for m in parsed if m]
    assert done == sorted(done) and done[-1] == 20  # the last line closes the count
    assert {int(m.group(2)) for m in parsed if m} == {20}
    assert int(parsed[-1].group(3)) == 1  # the 400 is counted  # type: ignore[union-attr]
    assert "20 items: 19 ok, 1 errors" in proc.stderr  # the summary follows


def test_a_short_piped_run_stays_silent(tmp_path) -> None:
    with FakeChatServer() as srv:
        proc = _run(srv, tmp_path, 3, "60")
    assert proc.returncode == 0, proc.stderr
    assert "LLM calls:" not in proc.stderr and "items:" not in proc.stderr


def test_progress_line_format() -> None:
    first = "LLM calls: 0/10 done, 0 errors, 0.0 calls/s, ETA unknown"
    assert progress_line(0, 10, 0, 0.0) == first
    assert progress_line(30, 150, 2, 60.0).endswith("2.0 s/call, ETA 4 min 00 s")
    assert progress_line(30, 150, 2, 10.0).endswith("3.0 calls/s, ETA 40 s")
