"""Epoch reducers: hand-worked values, pass@k / pass^k against closed form and brute force,
field rules, custom reducers, several reducers at once, dict values, failed samples."""

import itertools
import math

import numpy as np
import pytest

from assay.errors import InvalidInputError
from assay.stats import (
    SampleScore,
    Score,
    ScoreFrame,
    accuracy,
    evaluate_scores,
    get_reducer,
    mean,
    pass_at_k,
    pass_hat_k,
    reduce_scores,
    reducer,
    registered_reducers,
    stderr,
)


def epochs(values, sid="s"):
    return [SampleScore(Score(v), sid, e) for e, v in enumerate(values, 1)]


def reduced(name, values):
    return get_reducer(name)([Score(v) for v in values]).value


# one sample, five epochs: C I C P C  -> floats 1 0 1 .5 1 (c = 3 at threshold 1)
FIVE = ["C", "I", "C", "P", "C"]


def test_builtin_reducers_hand_worked():
    assert reduced("mean", FIVE) == pytest.approx(3.5 / 5)
    assert reduced("median", FIVE) == 1.0  # sorted 0 .5 1 1 1
    assert reduced("median", [0.0, 1.0, 0.5, 0.25]) == 0.375  # (.25 + .5) / 2
    assert reduced("mode", FIVE) == "C"
    assert reduced("max", FIVE) == "C"
    assert reduced("max", [0.2, 0.9, 0.4]) == 0.9
    # pass@2 = 1 - C(2,2)/C(5,2) = 1 - 1/10
    assert reduced("pass_at_2", FIVE) == pytest.approx(0.9)
    # pass@1 = c / n
    assert reduced("pass_at_1", FIVE) == pytest.approx(0.6)
    # pass^2 = C(3,2)/C(5,2) = 3/10 ; pass^3 = 1/10
    assert reduced("pass_k_2", FIVE) == pytest.approx(0.3)
    assert reduced("pass_k_3", FIVE) == pytest.approx(0.1)
    assert reduced("at_least_3", FIVE) == 1.0
    assert reduced("at_least_4", FIVE) == 0.0


def test_threshold_value_parameter():
    r = get_reducer("at_least_2")
    assert r.params == {"k": 2, "value": 1.0}
    from assay.stats import at_least, pass_at

    # with value=0.5 the P epoch counts as correct: c = 4
    assert at_least(4, value=0.5)([Score(v) for v in FIVE]).value == 1.0
    assert pass_at(5, value=0.5)([Score(v) for v in FIVE]).value == 1.0
    assert at_least(4, value=0.5).name == "at_least_4"


def test_mode_ties_go_to_first_seen_and_uses_raw_values():
    assert reduced("mode", ["I", "C", "C", "I"]) == "I"
    assert reduced("mode", ["C", "I", "N"]) == "C"  # I and N both convert to 0, but are distinct
    assert reduced("mode", [0.5, 0.25, 0.25]) == 0.25


def test_max_returns_first_raw_value_attaining_it():
    assert reduced("max", ["yes", "C", 1.0]) == "yes"
    assert reduced("max", ["I", "N"]) == "I"


def _brute(n, c, k, all_correct):
    attempts = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    if all_correct:
        hits = sum(all(attempts[i] for i in sub) for sub in subsets)
    else:
        hits = sum(any(attempts[i] for i in sub) for sub in subsets)
    return hits / len(subsets)


def test_pass_at_k_and_pass_hat_k_against_closed_form_and_brute_force():
    rows = [(n, c, k) for n in range(1, 9) for c in range(n + 1) for k in range(1, n + 1)]
    n, c, k = (np.array(x) for x in zip(*rows))
    for kk in range(1, 9):
        sel = k == kk
        got_at = pass_at_k(n[sel], c[sel], kk)
        got_hat = pass_hat_k(n[sel], c[sel], kk)
        for (ni, ci), a, h in zip(zip(n[sel], c[sel]), got_at, got_hat):
            closed_at = 1 - math.comb(ni - ci, kk) / math.comb(ni, kk)
            closed_hat = math.comb(ci, kk) / math.comb(ni, kk)
            assert a == pytest.approx(closed_at, abs=1e-14)
            assert h == pytest.approx(closed_hat, abs=1e-14)
            assert a == pytest.approx(_brute(ni, ci, kk, False), abs=1e-14)
            assert h == pytest.approx(_brute(ni, ci, kk, True), abs=1e-14)


def test_pass_at_k_large_n_is_stable():
    # n = 200, c = 3, k = 50: closed form with exact integers
    exact = 1 - math.comb(197, 50) / math.comb(200, 50)
    assert pass_at_k(np.array([200]), np.array([3]), 50)[0] == pytest.approx(exact, rel=1e-13)
    exact_hat = math.comb(180, 50) / math.comb(200, 50)
    assert pass_hat_k(np.array([200]), np.array([180]), 50)[0] == pytest.approx(
        exact_hat, rel=1e-12
    )


def test_pass_at_k_needs_k_scored_epochs_sample_counts_as_failed():
    s = epochs(["C", None, "I"], "a") + epochs(["C", "C", "I"], "b")
    ms = evaluate_scores(s, [mean()], reducers="pass_at_3")
    rec = ms.get("Mean")
    # sample a has only 2 scored epochs: excluded and counted; b: 1 - C(1,3)/C(3,3) = 1
    assert rec.value == 1.0 and rec.parameters["n"] == 1 and rec.parameters["n_failed"] == 1
    # at_least needs no minimum: a has 1 correct of 2 scored -> 0 for at_least_2
    assert evaluate_scores(s, [mean()], reducers="at_least_2").get("Mean").value == 0.5


def test_answer_explanation_kept_only_when_equal_metadata_from_first_epoch():
    s = [
        SampleScore(
            Score("C", answer="4", explanation="ok", metadata={"e": 1}), "q", 1, {"topic": "m"}
        ),
        SampleScore(
            Score("I", answer="4", explanation="bad", metadata={"e": 2}), "q", 2, {"topic": "m"}
        ),
    ]
    for name in ["mean", "mode", "max", "pass_at_1", "at_least_1", "median"]:
        (r,) = reduce_scores(s, name)
        assert r.score.answer == "4"
        assert r.score.explanation is None
        assert r.score.metadata == {"e": 1}
        assert r.sample_metadata == {"topic": "m"}
        assert r.sample_id == "q"


def test_epochs_are_reduced_in_epoch_order_not_list_order():
    s = [
        SampleScore(Score("I", metadata={"e": 2}), "q", 2),
        SampleScore(Score("C", metadata={"e": 1}), "q", 1),
    ]
    (r,) = reduce_scores(s, "mode")
    assert r.score.value == "C" and r.score.metadata == {"e": 1}


def test_reduce_scores_many_samples_order_and_failures():
    s = epochs([1, 0], "b") + epochs([None, None], "a") + epochs([1, None, 1], "c")
    out = reduce_scores(s, "mean")
    assert [r.sample_id for r in out] == ["b", "a", "c"]
    assert [r.score.value for r in out] == [0.5, None, 1.0]


def test_dict_valued_scores_reduce_per_key_and_give_one_metric_per_key():
    s = [
        SampleScore(Score({"em": "C", "f1": 0.5}), 1, 1),
        SampleScore(Score({"em": "I", "f1": 1.0}), 1, 2),
        SampleScore(Score({"em": "C", "f1": None}), 2, 1),
        SampleScore(Score(None), 3, 1),
    ]
    (r1, r2, r3) = reduce_scores(s, "mean")
    assert r1.score.value == {"em": 0.5, "f1": 0.75}
    assert r2.score.value == {"em": 1.0, "f1": None}
    assert r3.score.value == {"em": None, "f1": None}
    ms = evaluate_scores(s, [mean()], reducers=["mean", "max"])
    assert ms.get("Mean", reducer="mean", score_key="em").value == 0.75
    f1 = ms.get("Mean", reducer="mean", score_key="f1")
    assert f1.value == 0.75 and f1.parameters["n"] == 1 and f1.parameters["n_failed"] == 2
    assert ms.get("Mean", reducer="max", score_key="em").value == 1.0


def test_mixing_dict_and_scalar_values_is_an_error():
    with pytest.raises(InvalidInputError, match="mix"):
        evaluate_scores([SampleScore(Score({"a": 1}), 1), SampleScore(Score(1), 2)])


def test_several_reducers_one_set_of_metrics_each():
    s = epochs(["C", "I", "I"], 1) + epochs(["C", "C", "C"], 2) + epochs(["I", "I", "I"], 3)
    ms = evaluate_scores(
        s, [accuracy(), stderr()], reducers=["mean", "pass_at_2", "pass_k_2", "at_least_1", "mode"]
    )
    acc = {m.parameters["reducer"]: m.value for m in ms.filter("Accuracy")}
    # per-sample: mean (1/3, 1, 0); pass@2 (1 - C(2,2)/C(3,2) = 2/3, 1, 0); pass^2 (0, 1, 0);
    # at_least_1 (1, 1, 0); mode (I -> 0, 1, 0)
    assert acc["mean"] == pytest.approx(4 / 9)
    assert acc["pass_at_2"] == pytest.approx(5 / 9)
    assert acc["pass_k_2"] == pytest.approx(1 / 3)
    assert acc["at_least_1"] == pytest.approx(2 / 3)
    assert acc["mode"] == pytest.approx(1 / 3)
    assert len(ms.filter("Stderr")) == 5
    assert all(m.parameters["n"] == 3 for m in ms)


def test_vectorised_reduction_matches_object_reduction_on_random_data():
    rng = np.random.default_rng(5)
    sid = rng.integers(0, 40, 300)
    ep = rng.integers(1, 6, 300)
    vals = rng.choice([0.0, 0.25, 0.5, 1.0], 300)
    s = [SampleScore(Score(float(v)), int(i), int(e)) for v, i, e in zip(vals, sid, ep)]
    frame = ScoreFrame.from_arrays(vals, sample_id=sid, epoch=ep)
    for name in ["mean", "median", "mode", "max", "pass_at_1", "pass_k_1", "at_least_2"]:
        obj = {r.sample_id: r.score.value for r in reduce_scores(s, name)}
        red = get_reducer(name).reduce_frame(frame)
        vec = dict(zip(red.sample_id.tolist(), red.values.tolist()))
        assert obj.keys() == vec.keys()
        for k, v in obj.items():
            assert float(v) == pytest.approx(vec[k], abs=1e-12)


def test_custom_reducer_with_k_suffix_and_registry():
    @reducer
    def top(k: int = 1):
        def reduce(scores):
            vals = sorted((s.as_float() for s in scores), reverse=True)[:k]
            return sum(vals) / len(vals)

        return reduce

    assert "top" in registered_reducers()
    r = get_reducer("top_2")
    assert r.name == "top_2"
    assert r([Score(0.2), Score(0.9), Score(0.5)]).value == pytest.approx(0.7)
    s = epochs([0.2, 0.9, 0.5], "x") + epochs([1.0, None, 0.0], "y") + epochs([None], "z")
    ms = evaluate_scores(s, [mean()], reducers=["top_2", "mean"])
    t = ms.get("Mean", reducer="top_2")
    assert t.value == pytest.approx((0.7 + 0.5) / 2) and t.parameters["n_failed"] == 1
    assert ms.get("Mean", reducer="mean").value == pytest.approx((1.6 / 3 + 0.5) / 2)


def test_custom_reducer_returning_a_score_keeps_its_fields():
    @reducer(name="last_one")
    def last():
        return lambda scores: scores[-1]

    s = [SampleScore(Score(0, answer="a"), 1, 1), SampleScore(Score(1, answer="b"), 1, 2)]
    (r,) = reduce_scores(s, "last_one")
    assert r.score.value == 1 and r.score.answer == "b"


def test_unknown_reducer_and_missing_k():
    with pytest.raises(InvalidInputError, match="needs a k"):
        get_reducer("pass_at")
    with pytest.raises(InvalidInputError, match="unknown reducer"):
        get_reducer("best_of_3")
    with pytest.raises(InvalidInputError, match="k must be at least 1"):
        get_reducer("pass_at_0")


def test_list_valued_scores_reduce_per_index_and_give_one_metric_per_index():
    s = [
        SampleScore(Score(["C", 0.5]), 1, 1),
        SampleScore(Score(["I", 1.0]), 1, 2),
        SampleScore(Score(["C", None]), 2, 1),
    ]
    (r1, r2) = reduce_scores(s, "max")
    assert r1.score.value == ["C", 1.0]
    assert r2.score.value == ["C", None]
    ms = evaluate_scores(s, [mean()])
    assert ms.get("Mean", score_key=0).value == 0.75
    assert (
        ms.get("Mean", score_key=1).value == 0.75
        and ms.get("Mean", score_key=1).parameters["n_failed"] == 1
    )
    with pytest.raises(InvalidInputError, match="mix"):
        evaluate_scores([SampleScore(Score([1]), 1), SampleScore(Score({"a": 1}), 2)])
