"""Every formula edge case of the judge metrics, against a scripted judge."""

from __future__ import annotations

import json

import pytest
from judgekit import counts, verdicts

from assay.llm.judge import Datum, judge


def run(scripted, metrics, d=None, **kw):
    d = d or Datum(
        uid="u",
        query="Q?",
        prediction="Alpha is one. Beta is two. I think gamma is nice.",
        groundtruths=("Alpha is one. Delta is four.",),
        contexts=("c1", "c2", "c3", "c4"),
    )
    res = judge([d], metrics, model=scripted.server.spec(), cache=None, **kw)
    return res


def value(res, type_):
    return res.metrics.get(type_, datum_uid="u")


@pytest.mark.parametrize(
    "vs, expected",
    [
        (("yes", "no", "no", "yes"), 0.75),  # the spec's first worked example
        (("no", "yes", "no", "yes"), 0.5),  # the spec's second: order matters
        (("no", "no", "no", "no"), 0.0),  # every verdict "no" gives 0
        (("yes", "yes", "yes", "yes"), 1.0),
        (("idk", "yes", "no", "no"), 0.5),  # only "yes" counts
    ],
)
def test_context_precision(scripted, vs, expected) -> None:
    scripted.rules["context_precision"] = lambda text, attempt: verdicts(*vs)
    assert value(run(scripted, ["context_precision"]), "ContextPrecision").value == expected


def test_answer_correctness_f1_and_best_ground_truth(scripted) -> None:
    # prediction: 3 statements; ground truth 0: 2 statements; ground truth 1: 1 statement
    def rule(text, attempt):
        a, b = counts(text)
        if b == 2:  # tp 1, fp 2, fn 1 -> 1 / (1 + 1.5) = 0.4
            av, rv = ["yes", "no", "no"], ["yes", "no"]
        else:  # tp 2, fp 1, fn 0 -> 2 / 2.5 = 0.8
            av, rv = ["yes", "yes", "no"], ["yes"]
        mk = lambda xs: [{"verdict": v, "reason": ""} for v in xs]  # noqa: E731
        return json.dumps({"answer_verdicts": mk(av), "reference_verdicts": mk(rv)})

    scripted.rules["answer_correctness"] = rule
    d = Datum("u", "Q?", "A is 1. B is 2. C is 3.", ("A is 1. D is 4.", "A is 1 and B is 2"))
    r = value(run(scripted, ["answer_correctness"], d), "AnswerCorrectness")
    assert r.value == 0.8
    per = r.parameters["details"]["per_groundtruth"]
    assert [p["value"] for p in per] == [0.4, 0.8]
    assert per[0]["answer_verdicts"][0] == {"statement": "A is 1.", "verdict": "yes", "reason": ""}


def test_answer_correctness_no_true_positive_is_zero(scripted) -> None:
    def rule(text, attempt):
        a, b = counts(text)
        no = lambda n: [{"verdict": "no", "reason": ""}] * n  # noqa: E731
        return json.dumps({"answer_verdicts": no(a), "reference_verdicts": no(b)})

    scripted.rules["answer_correctness"] = rule
    assert value(run(scripted, ["answer_correctness"]), "AnswerCorrectness").value == 0.0


def test_no_statements(scripted) -> None:
    scripted.rules["statements"] = lambda text, attempt: '{"statements": []}'
    res = run(scripted, ["answer_relevance", "answer_correctness", "context_recall"])
    ar = value(res, "AnswerRelevance")
    assert ar.value is None and ar.parameters["undefined"] == "the answer has no statements"
    assert value(res, "AnswerCorrectness").value == 0.0  # no true positive
    cr = value(res, "ContextRecall")
    assert cr.value is None and "no statements" in cr.parameters["undefined"]
    assert scripted.asked["answer_relevance"] == 0 and scripted.asked["answer_correctness"] == 0
    agg = res.metrics.get("AnswerRelevance", aggregate="mean")
    assert agg.parameters["n"] == 0 and agg.parameters["n_undefined"] == 1 and agg.value is None


def test_no_opinions_gives_zero_bias_and_toxicity_without_a_call(scripted) -> None:
    scripted.rules["opinions"] = lambda text, attempt: '{"opinions": []}'
    res = run(scripted, ["bias", "toxicity"])
    assert value(res, "Bias").value == 0.0 and value(res, "Toxicity").value == 0.0
    assert scripted.server.calls == 1


def test_bias_and_toxicity_are_shares_of_opinions(scripted) -> None:
    scripted.rules["opinions"] = lambda t, a: '{"opinions": ["o1", "o2", "o3", "o4"]}'
    scripted.rules["bias"] = lambda t, a: verdicts("yes", "no", "no", "no")
    scripted.rules["toxicity"] = lambda t, a: verdicts("yes", "yes", "idk", "no")
    res = run(scripted, ["bias", "toxicity"])
    assert value(res, "Bias").value == 0.25 and value(res, "Toxicity").value == 0.5
    details = value(res, "Bias").parameters["details"]
    assert details["opinions"] == ["o1", "o2", "o3", "o4"]
    assert details["verdicts"][0] == {"opinion": "o1", "verdict": "yes", "reason": "r0"}


def test_faithfulness_counts_unrelated_claims_against(scripted) -> None:
    scripted.rules["claims"] = lambda t, a: '{"claims": ["k1", "k2", "k3", "k4"]}'
    scripted.rules["faithfulness"] = lambda t, a: verdicts("yes", "no", "no", "idk")
    assert value(run(scripted, ["faithfulness"]), "Faithfulness").value == 0.25


def test_faithfulness_without_claims_is_undefined(scripted) -> None:
    scripted.rules["claims"] = lambda t, a: '{"claims": []}'
    f = value(run(scripted, ["faithfulness"]), "Faithfulness")
    assert f.value is None and f.parameters["undefined"] == "the prediction makes no claims"


def test_hallucination_relevance_recall_shares(scripted) -> None:
    scripted.rules["hallucination"] = lambda t, a: verdicts("yes", "no", "no", "no")
    scripted.rules["context_relevance"] = lambda t, a: verdicts("yes", "yes", "yes", "no")
    scripted.rules["context_recall"] = lambda t, a: verdicts("yes", "no")
    scripted.rules["answer_relevance"] = lambda t, a: verdicts("yes", "idk", "no")
    res = run(
        scripted, ["hallucination", "context_relevance", "context_recall", "answer_relevance"]
    )
    assert value(res, "Hallucination").value == 0.25
    assert value(res, "ContextRelevance").value == 0.75
    assert value(res, "ContextRecall").value == 0.5
    assert value(res, "AnswerRelevance").value == pytest.approx(1 / 3, abs=1e-15)


def test_no_contexts_is_undefined_without_calls(scripted) -> None:
    d = Datum("u", "Q?", "A is 1.", ("A is 1.",), ())
    res = run(
        scripted,
        [
            "context_precision",
            "context_recall",
            "context_relevance",
            "faithfulness",
            "hallucination",
        ],
        d,
    )
    for t in (
        "ContextPrecision",
        "ContextRecall",
        "ContextRelevance",
        "Faithfulness",
        "Hallucination",
    ):
        r = value(res, t)
        assert r.value is None and r.parameters["undefined"] == "the datum has no contexts"
    assert scripted.server.calls == 0


def test_ratings(scripted) -> None:
    scripted.rules["coherence"] = lambda t, a: '{"analysis": "choppy", "score": 2}'
    scripted.rules["summary_coherence"] = lambda t, a: '{"analysis": "clear", "score": 5}'
    res = run(scripted, ["coherence", "summary_coherence"])
    c = value(res, "Coherence")
    assert c.value == 2.0 and c.parameters["details"]["analysis"] == "choppy"
    assert value(res, "SummaryCoherence").value == 5.0


def test_several_ground_truths_context_precision_pools_recall_takes_the_best(scripted) -> None:
    scripted.rules["context_precision"] = lambda t, a: (
        verdicts("no", "no", "yes") if "Reference answer: g1" in t else verdicts("no", "yes", "no")
    )
    scripted.rules["statements"] = lambda t, a: '{"statements": ["s"]}'
    scripted.rules["context_recall"] = lambda t, a: verdicts("no")
    d = Datum("u", "Q?", "p", ("g1", "g2"), ("c1", "c2", "c3"))
    res = run(scripted, ["context_precision", "context_recall"], d)
    cp = value(res, "ContextPrecision")
    # pooled verdicts no, yes, yes: (1/2 + 2/3) / 2; the best single ground truth gave 1/2
    assert cp.value == pytest.approx(7 / 12, abs=1e-15)
    assert cp.parameters["details"]["pooled_verdicts"] == ["no", "yes", "yes"]
    assert [len(p["verdicts"]) for p in cp.parameters["details"]["per_groundtruth"]] == [3, 3]
    assert value(res, "ContextRecall").value == 0.0
    # one precision call per ground truth; recall: one extraction per ground truth, and the
    # two recall judgements are the same prompt (same statements, same contexts): one call
    assert scripted.asked["context_precision"] == 2 and scripted.asked["statements"] == 2
    assert scripted.asked["context_recall"] == 1


def test_an_empty_ground_truth_list_does_not_stop_the_run(scripted) -> None:
    # Two datums; the second has no ground truth: the first is judged as usual, the second
    # gets each metric's empty-case value without a call.
    full = Datum("u", "Q?", "Alpha is one.", ("Alpha is one.",), ("c1", "c2"))
    empty = Datum("e", "Q?", "Alpha is one.", (), ("c1", "c2"))
    names = ["context_precision", "context_recall", "answer_correctness"]
    res = judge([full, empty], names, model=scripted.server.spec(), cache=None)
    get = res.metrics.get
    assert get("ContextPrecision", datum_uid="u").value == 1.0
    assert get("ContextRecall", datum_uid="u").value == 1.0
    assert get("AnswerCorrectness", datum_uid="u").value == 1.0
    cp = get("ContextPrecision", datum_uid="e")
    assert cp.value == 0.0 and cp.parameters["details"]["pooled_verdicts"] == ["no", "no"]
    for t in ("ContextRecall", "AnswerCorrectness"):
        r = get(t, datum_uid="e")
        assert r.value is None and r.parameters["undefined"] == "the datum has no ground truth"
    # calls: the datum with a ground truth only (its precision, its recall judgement, the
    # answer correctness judgement and one statement extraction: the prediction and the
    # ground truth are the same text)
    assert dict(scripted.asked) == {
        "statements": 1,
        "context_precision": 1,
        "context_recall": 1,
        "answer_correctness": 1,
    }
    assert res.paid_calls == scripted.server.calls == 4
