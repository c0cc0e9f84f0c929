"""One end-to-end run per suite on the real embedded model (a handful of items each)."""

from __future__ import annotations

import pytest
from suitekit import CAT_DEV, EXAM, write_cat_file

from assay.llm.suites import run_cat, run_fairness, run_language

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model():
    from assay.llm import load_model

    return load_model("embedded", n_ctx=4096)


def _every_call_answered(result, n):
    assert result.status == "finished" and len(result.calls) == n
    assert all(c.record.ok and c.parsed is not None for c in result.calls), [
        c.record.error for c in result.calls
    ]


def test_cat_on_the_embedded_model(model, tmp_path):
    result = run_cat(CAT_DEV, model, max_queries=4, cache=tmp_path / "c.sqlite", timeout=600)
    _every_call_answered(result, 4)
    counts = result.metrics.get("CATCounts", scope="general").value
    assert sum(counts.values()) == 4 and counts["errors"] == 0
    again = run_cat(CAT_DEV, model, max_queries=4, cache=tmp_path / "c.sqlite", timeout=600)
    assert all(c.record.cached for c in again.calls) and again.metrics == result.metrics


def test_fairness_on_the_embedded_model(model, tmp_path):
    result = run_fairness(
        "pisa", model, sample=True, max_queries=2, cache=tmp_path / "c.sqlite", timeout=600
    )
    originals = [c for c in result.calls if not c.info["counterfactual"]]
    assert len(originals) == 2 and len(result.calls) == 4  # every original answered: 2 cf
    _every_call_answered(result, 4)
    (counts,) = [m for m in result.metrics.filter("ResponseCounts") if not m.parameters]
    assert counts.value["valid"] + counts.value["invalid"] == 2 and counts.value["errors"] == 0


def test_language_on_the_embedded_model(model, tmp_path):
    result = run_language(EXAM, model, max_queries=3, cache=tmp_path / "c.sqlite", timeout=600)
    _every_call_answered(result, 3)
    counts = result.metrics.get("LanguageCounts", language="all").value
    assert counts["errors"] == 0 and sum(counts.values()) == 3


def test_cat_at_concurrency_4_has_no_timeouts(model, tmp_path):
    """40 questions, 4 sent at once to a model that answers one at a time: queued calls
    wait their turn without timing out (a timeout counts from a call's start). The
    timeout is twice the slowest of 4 calls made one at a time, plus 5 s.
    (tests/llm/test_llm_queue.py proves the rule with a scripted slow model.)"""
    data = write_cat_file(tmp_path / "dev.json", 40)
    cache = tmp_path / "c.sqlite"
    first = run_cat(data, model, max_queries=4, cache=cache, concurrency=1, timeout=600)
    _every_call_answered(first, 4)
    timeout = 2 * max(c.record.latency for c in first.calls) + 5.0
    result = run_cat(data, model, max_queries=40, cache=cache, concurrency=4, timeout=timeout)
    assert result.status == "finished" and len(result.calls) == 40
    assert [c.record.error_kind for c in result.calls if not c.record.ok] == []
    counts = result.metrics.get("CATCounts", scope="general").value
    assert sum(counts.values()) == 40 and counts["errors"] == 0
    called = [c.record for c in result.calls if not c.record.cached]
    assert len(called) >= 36 and all(r.attempts == 1 for r in called)
    # the calls did queue: some waited longer than a whole call of the model before starting
    waits = [r.elapsed - r.latency for r in called]
    assert max(waits) > min(r.latency for r in called)
