"""Run control: --max-errors stops a run (failed, calls kept); resume after SIGKILL repeats none."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from suitekit import first_option_answer, make_dev

from assay.llm.suites import CATSuite, run_cat
from assay.testing.llm_resume import kill_when_cached

RUN = {"cache": False, "retries": 0, "quiet": True}


def test_max_errors_stops_the_run_and_keeps_the_calls_made(chat_server, tmp_path):
    dev = make_dev(tmp_path / "dev.json", 30)
    prompts = [p.item.messages[-1]["content"] for p in CATSuite(str(dev)).prepare()]
    # the 2nd, 5th, 6th, 9th calls fail; with max_errors=3 the 4th failure stops the run
    failing = {prompts[i]: ["400"] for i in (1, 4, 5, 8, 20)}
    srv = chat_server(plan=failing, responder=first_option_answer)
    result = run_cat(dev, srv.spec(), max_errors=3, concurrency=1, **RUN)
    assert result.status == "failed"
    assert "4 call errors exceed max_errors=3" in result.error
    assert len(result.calls) == 9 and srv.calls == 9  # nothing started after the 4th error
    assert sum(not c.record.ok for c in result.calls) == 4
    assert result.metrics.get("CATCounts", scope="general").value["errors"] == 4
    # not exceeded: the run finishes
    srv2 = chat_server(plan={prompts[1]: ["400"]}, responder=first_option_answer)
    ok = run_cat(dev, srv2.spec(), max_errors=1, concurrency=4, **RUN)
    assert ok.status == "finished" and len(ok.calls) == 30


def test_max_errors_with_concurrency_lets_calls_in_flight_finish(chat_server, tmp_path):
    dev = make_dev(tmp_path / "dev.json", 60)
    srv = chat_server(plan={}, responder=first_option_answer, latency=0.02)
    srv.plan = {p.item.messages[-1]["content"]: ["500"] for p in CATSuite(str(dev)).prepare()}
    result = run_cat(dev, srv.spec(), max_errors=2, concurrency=4, **RUN)
    assert result.status == "failed"
    assert 3 <= len(result.calls) <= 3 + 4 and srv.calls == len(result.calls) < 60


@pytest.mark.slow
def test_sigkill_then_resume_repeats_no_answered_call(chat_server, tmp_path):
    total, before_kill = 40, 15
    dev = make_dev(tmp_path / "dev.json", total)
    cache = tmp_path / "cache.sqlite"
    srv = chat_server(responder=first_option_answer, answer_limit=before_kill, hang_seconds=60)
    cmd = [
        sys.executable, "-m", "assay", "llm", "cat", "--data", str(dev),
        "--model", srv.spec(), "--cache", str(cache), "--concurrency", "4",
        "--quiet", "--db", str(tmp_path / "store.db"), "--out", str(tmp_path / "out.json"),
    ]  # fmt: skip
    assert kill_when_cached(cmd, cache, before_kill) == -signal.SIGKILL
    assert not (tmp_path / "out.json").exists()
    answered = {prompt for prompt, outcome in srv.log if outcome == "ok"}
    assert srv.answered == before_kill and len(answered) == before_kill
    srv.answer_limit = None
    srv.reset()
    done = subprocess.run(cmd, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert srv.calls == total - before_kill  # zero repeated calls
    assert not answered & set(srv.per_prompt)
    assert (tmp_path / "out.json").exists()
