"""End to end on the real embedded model (SmolLM2-135M on llama.cpp): a few datums, every
judge metric. A 135M model often replies with invalid JSON; the test checks the run
completes with one record per datum and metric, values in range or errors with the raw
reply kept, and the calls through the runner's cache on a rerun."""

from __future__ import annotations

import pytest

from assay.llm import load_model
from assay.llm.judge import JUDGE_METRICS, Datum, judge

pytestmark = pytest.mark.slow

DATA = [
    Datum(
        "d1",
        "What is the capital of France?",
        "Paris is the capital of France.",
        ("The capital of France is Paris.",),
        ("Paris is the capital and largest city of France.",),
    ),
    Datum(
        "d2",
        "How many legs does a spider have?",
        "A spider has eight legs.",
        ("Spiders have eight legs.",),
        ("Spiders are arachnids with eight legs.", "Insects have six legs."),
    ),
]


def _run(model, cache):
    return judge(
        DATA,
        JUDGE_METRICS,
        model=model,
        cache=cache,
        judge_retries=0,
        params={"temperature": 0.0, "max_tokens": 64},
        concurrency=1,
    )


def test_every_metric_on_the_embedded_model(tmp_path) -> None:
    model = load_model("embedded")
    cache = tmp_path / "cache.sqlite"
    res = _run(model, cache)
    per = [m for m in res.metrics if "datum_uid" in m.parameters]
    assert len(per) == len(DATA) * len(JUDGE_METRICS)
    for m in per:
        if m.value is None:
            assert m.parameters["undefined"]
            if m.parameters["undefined"].startswith("judge error: invalid reply"):
                assert m.parameters["raw_reply"] is not None
        elif m.type in ("Coherence", "SummaryCoherence"):
            assert 1.0 <= m.value <= 5.0
        else:
            assert 0.0 <= m.value <= 1.0
    assert res.paid_calls > 0
    again = _run(model, cache)
    assert again.paid_calls == 0
    assert [m.value for m in again.metrics] == [m.value for m in res.metrics]


def test_constrained_replies_parse_on_every_call_of_every_metric(tmp_path) -> None:
    # By default (structured "auto") each reply's JSON schema goes to llama.cpp as a
    # grammar: the 135M model answers every call of every metric in the exact shape (keys,
    # verdict values, list lengths), so no call is invalid and none is re-asked.
    model = load_model("embedded")
    res = judge(
        DATA,
        JUDGE_METRICS,
        model=model,
        cache=tmp_path / "cache.sqlite",
        params={"temperature": 0.0, "max_tokens": 1024},
    )
    assert res.parameters["constraint"] == "grammar"
    assert all("x7F" in c.item.params["grammar"] for c in res.calls)  # JSON by grammar
    bad = [(c.task, c.invalid or c.record.error) for c in res.calls if c.invalid or not c.record.ok]
    assert bad == []
    assert not any("#reask" in c.item.id for c in res.calls)  # nothing re-asked
    assert res.paid_calls == len(res.calls) == len({c.task for c in res.calls})
    per = [m for m in res.metrics if "datum_uid" in m.parameters]
    assert len(per) == len(DATA) * len(JUDGE_METRICS)
    assert all(m.value is not None or "judge error" not in m.parameters["undefined"] for m in per)
