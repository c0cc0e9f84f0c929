"""Calls per datum for the full judge metric set, sharing, cache, and bad input."""

from __future__ import annotations

import pytest

from assay.errors import InvalidInputError
from assay.llm.judge import JUDGE_METRICS, Datum, judge

VALOR_CALLS_PER_DATUM = 18  # Valor's prompting strategy for the same eleven metrics


def datum(uid: str = "d1", **kw) -> Datum:
    base = dict(
        uid=uid,
        query="Where is the Eiffel Tower?",
        prediction="The Eiffel Tower is in Paris. I think it is beautiful.",
        groundtruths=("The Eiffel Tower is in Paris. It was built in 1889.",),
        contexts=("Paris is the capital of France.", "The tower was finished in 1889."),
    )
    base.update(kw)
    return Datum(**base)


def _distinct(i: int) -> Datum:
    return Datum(
        uid=f"d{i}",
        query=f"Question {i}?",
        prediction=f"Answer {i} is here. I think answer {i} is good.",
        groundtruths=(f"Reference {i} is there. It has two parts.",),
        contexts=(f"Context {i} one.", f"Context {i} two."),
    )


def test_full_metric_set_calls_per_datum(scripted) -> None:
    data = [_distinct(i) for i in range(3)]
    res = judge(data, JUDGE_METRICS, model=scripted.server.spec(), cache=None)
    per_datum = scripted.server.calls / len(data)
    assert per_datum == 15 == res.paid_calls / 3
    assert per_datum <= 0.85 * VALOR_CALLS_PER_DATUM  # at least 15% fewer (16.7%)
    assert scripted.asked["statements"] == 2 * 3  # prediction and ground truth, once each
    assert scripted.asked["opinions"] == 3 and scripted.asked["claims"] == 3
    assert len(res.metrics.filter(aggregate="mean")) == len(JUDGE_METRICS)
    assert sum(m.value is not None for m in res.metrics) == len(res.metrics)


def test_identical_texts_across_datums_are_asked_once(scripted) -> None:
    """Three datums sharing query, ground truth and contexts share those calls."""
    data = [
        datum(f"d{i}", prediction=f"Answer {i} is here. I think {i} is good.") for i in range(3)
    ]
    judge(data, JUDGE_METRICS, model=scripted.server.spec(), cache=None)
    assert scripted.asked["statements"] == 3 + 1
    assert scripted.asked["context_relevance"] == 1 and scripted.asked["context_precision"] == 1
    assert scripted.server.calls < 3 * 15


def test_shared_intermediates_are_paid_once(scripted) -> None:
    judge(
        [datum()],
        ["answer_correctness", "answer_relevance", "context_recall"],
        model=scripted.server.spec(),
        cache=None,
    )
    # prediction statements + ground-truth statements + 3 judgements
    assert scripted.server.calls == 5
    scripted.reset()
    judge([datum()], ["bias", "toxicity"], model=scripted.server.spec(), cache=None)
    assert scripted.server.calls == 3 and scripted.asked["opinions"] == 1


def test_cache_makes_a_rerun_free(scripted, tmp_path) -> None:
    cache = tmp_path / "cache.sqlite"
    a = judge([datum()], JUDGE_METRICS, model=scripted.server.spec(), cache=cache)
    calls = scripted.server.calls
    b = judge([datum()], JUDGE_METRICS, model=scripted.server.spec(), cache=cache)
    assert calls == 15 and scripted.server.calls == 15 and b.paid_calls == 0
    assert [m.value for m in a.metrics if "datum_uid" in m.parameters] == [
        m.value for m in b.metrics if "datum_uid" in m.parameters
    ]


@pytest.mark.parametrize(
    "metric, change, column",
    [
        ("answer_correctness", {"prediction": None}, "prediction"),
        ("answer_relevance", {"query": None}, "query"),
        ("faithfulness", {"contexts": None}, "context"),
        ("bias", {"prediction": None}, "prediction"),
    ],
)
def test_missing_field_fails_before_any_call(scripted, metric, change, column) -> None:
    with pytest.raises(InvalidInputError) as e:
        judge([datum(), datum("d2", **change)], [metric], model=scripted.server.spec(), cache=None)
    assert metric in str(e.value) and e.value.field == column and e.value.record == "d2"
    assert scripted.server.calls == 0


def test_unknown_metric_and_duplicate_uids(scripted) -> None:
    with pytest.raises(InvalidInputError, match="unknown judge metric 'fluency'"):
        judge([datum()], ["fluency"], model=scripted.server.spec(), cache=None)
    with pytest.raises(InvalidInputError, match="unique"):
        judge([datum(), datum()], ["bias"], model=scripted.server.spec(), cache=None)
    assert scripted.server.calls == 0


def test_structured_asks_each_call_for_its_reply_schema(scripted) -> None:
    # Each request carries its own schema: the extraction's keys, or verdict lists of
    # exactly the length the judgement needs; the replies are still parsed the same way.
    d = datum()
    plain = judge([d], ["faithfulness", "coherence"], model=scripted.server.spec(), cache=None)
    scripted.reset()
    res = judge(
        [d],
        ["faithfulness", "coherence"],
        model=scripted.server.spec(),
        cache=None,
        structured=True,
    )
    assert [m.value for m in res.metrics] == [m.value for m in plain.metrics]
    formats = {c.task: c.item.params["response_format"] for c in res.calls}
    sent = [r["response_format"] for r in scripted.server.requests]
    assert len(sent) == scripted.server.calls == len(formats) == 3
    assert sorted(map(str, sent)) == sorted(map(str, formats.values()))
    claims = next(f for k, f in formats.items() if k.startswith("claims:"))
    n_claims = len(next(c.parsed["claims"] for c in res.calls if c.task.startswith("claims:")))
    verdicts = formats["d1/faithfulness"]["json_schema"]["schema"]["properties"]["verdicts"]
    assert claims["json_schema"]["name"] == "Claims"
    assert verdicts["minItems"] == verdicts["maxItems"] == n_claims > 0
    score = formats["d1/coherence"]["json_schema"]["schema"]["properties"]["score"]
    assert score["enum"] == [1, 2, 3, 4, 5]
