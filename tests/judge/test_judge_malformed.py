"""Malformed judge replies: re-asked up to judge_retries times, then an error record."""

from __future__ import annotations

import json

import pytest
from judgekit import verdicts

from assay.llm.judge import Datum, judge

D = Datum("u", "Q?", "Alpha is one. Beta is two.", ("Alpha is one.",), ("c1", "c2"))

BAD = {
    "not JSON": ("Sure! The verdicts are yes and no.", "not JSON"),
    "a JSON list": ('[{"verdict": "yes"}]', "expected a JSON object"),
    "wrong key": ('{"verdict": [{"verdict": "yes", "reason": ""}]}', "verdicts: Field required"),
    "extra key": (
        '{"verdicts": [{"verdict": "yes", "reason": ""}, {"verdict": "no", "reason": ""}], '
        '"score": 1}',
        "score: Extra inputs are not permitted",
    ),
    "too few verdicts": (verdicts("yes"), 'expected 2 verdicts in "verdicts", got 1'),
    "too many verdicts": (verdicts("yes", "no", "no"), "expected 2 verdicts"),
    "verdict outside yes/no/idk": (
        verdicts("yes", "maybe"),
        "verdicts.1.verdict: Input should be 'yes', 'no' or 'idk'",
    ),
    "verdict not a string": (
        '{"verdicts": [{"verdict": 1, "reason": ""}, {"verdict": "no", "reason": ""}]}',
        "verdicts.0.verdict",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_reply_then_good_reply_is_used(scripted, case) -> None:
    bad, _ = BAD[case]
    scripted.rules["hallucination"] = lambda t, a: bad if a == 0 else verdicts("yes", "no")
    res = judge([D], ["hallucination"], model=scripted.server.spec(), cache=None)
    assert res.metrics.get("Hallucination", datum_uid="u").value == 0.5
    assert scripted.asked["hallucination"] == 2
    assert [c.invalid is not None for c in res.calls] == [True, False]


@pytest.mark.parametrize("case", list(BAD))
def test_always_bad_is_an_error_record_and_the_run_goes_on(scripted, case) -> None:
    bad, reason = BAD[case]
    scripted.rules["hallucination"] = lambda t, a: bad
    res = judge(
        [D],
        ["hallucination", "context_relevance"],
        model=scripted.server.spec(),
        cache=None,
        judge_retries=2,
    )
    r = res.metrics.get("Hallucination", datum_uid="u")
    assert r.value is None
    assert r.parameters["undefined"].startswith("judge error: invalid reply after 3 attempt(s)")
    assert reason in r.parameters["undefined"]
    assert r.parameters["raw_reply"] == bad
    assert scripted.asked["hallucination"] == 3  # the first ask and two re-asks
    assert res.metrics.get("ContextRelevance", datum_uid="u").value == 1.0
    agg = res.metrics.get("Hallucination", aggregate="mean")
    assert agg.parameters["n_errors"] == 1 and agg.parameters["n"] == 0


def test_retries_setting_and_reask_carries_the_reason(scripted) -> None:
    seen = []

    def rule(text, attempt):
        seen.append(attempt)
        return "nope"

    scripted.rules["coherence"] = rule
    judge([D], ["coherence"], model=scripted.server.spec(), cache=None, judge_retries=0)
    assert seen == [0]
    seen.clear()
    judge([D], ["coherence"], model=scripted.server.spec(), cache=None, judge_retries=4)
    assert seen == [0, 1, 2, 3, 4]
    last_user = [p for p, _ in scripted.server.log][-1]
    assert last_user.startswith("That reply could not be used: not JSON")


@pytest.mark.parametrize(
    "reply, ok",
    [
        ('{"analysis": "x", "score": 0}', False),
        ('{"analysis": "x", "score": 6}', False),
        ('{"analysis": "x", "score": 3.5}', False),
        ('{"analysis": "x", "score": "4"}', False),
        ('{"score": 4}', False),
        ('```json\n{"analysis": "x", "score": 3}\n```', True),
    ],
)
def test_rating_shape(scripted, reply, ok) -> None:
    scripted.rules["coherence"] = lambda t, a: reply
    res = judge([D], ["coherence"], model=scripted.server.spec(), cache=None, judge_retries=0)
    v = res.metrics.get("Coherence", datum_uid="u").value
    assert (v == 3.0) if ok else (v is None)


def test_failed_extraction_errors_every_metric_that_needs_it(scripted) -> None:
    scripted.rules["statements"] = lambda t, a: '{"statements": "one string"}'
    res = judge(
        [D],
        ["answer_relevance", "answer_correctness", "bias"],
        model=scripted.server.spec(),
        cache=None,
        judge_retries=1,
    )
    for t in ("AnswerRelevance", "AnswerCorrectness"):
        r = res.metrics.get(t, datum_uid="u")
        assert r.value is None and r.parameters["undefined"].startswith("judge error: statements")
        assert r.parameters["raw_reply"] == '{"statements": "one string"}'
    assert res.metrics.get("Bias", datum_uid="u").value == 0.0


def test_call_failure_is_an_error_record(scripted) -> None:
    d = Datum("u", "Q?", "text", ("g",), ("c1",))
    bad = json.loads(json.dumps(scripted.server.plan))  # keep the plan clean afterwards
    scripted.server.plan = {}
    from assay.llm.judge.prompts import render

    prompt = render("coherence", text="text").strip()
    scripted.server.plan[prompt] = ["400"]
    try:
        res = judge([d], ["coherence", "hallucination"], model=scripted.server.spec(), cache=None)
    finally:
        scripted.server.plan = bad
    r = res.metrics.get("Coherence", datum_uid="u")
    assert r.value is None and "call failed: http" in r.parameters["undefined"]
    assert res.metrics.get("Hallucination", datum_uid="u").value == 1.0
