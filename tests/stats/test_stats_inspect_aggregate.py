"""``aggregate`` honours the inner metric's ``to_float``, as Inspect AI does: against Inspect,
``aggregate(key, metric(to_float=m))`` equals ``metric(to_float=m)`` on the field, with and
without ``aggregate``'s own ``to_float`` (which converts the field first)."""

import numpy as np
import pytest
from inspect_ai.scorer import aggregate as i_aggregate
from stats_inspect_helpers import close, pair
from test_stats_inspect_to_float import METRICS, i_function

import assay.stats as st

INNER = {"P is 0": {"P": 0.0}, "P is 1": {"values": {"P": 1.0}}, "N is 1": {"N": 1.0}}


def _grades(seed, n=40):
    rng = np.random.default_rng(seed)
    return [{"g": str(rng.choice(list("CIPN"))), "x": float(rng.random())} for _ in range(n)]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("inner", list(INNER))
@pytest.mark.parametrize("ours_f, theirs_f, name", METRICS, ids=[m[2] for m in METRICS])
def test_aggregate_uses_the_inner_metrics_to_float(seed, inner, ours_f, theirs_f, name):
    values = _grades(seed)
    ours, theirs = pair(values)
    mapping = INNER[inner]
    expected = i_aggregate("g", theirs_f(to_float=i_function(mapping)))(theirs)
    got = st.aggregate("g", ours_f(to_float=mapping))(ours)
    assert close(got, expected), (got, expected)
    # ... which is the metric with that mapping on the field's values
    field_ours, _ = pair([v["g"] for v in values])
    assert close(got, ours_f(to_float=mapping)(field_ours))
    # and differs from the default conversion (the bug: the inner mapping was ignored)
    assert not close(got, ours_f()(field_ours)) or name in ("Var", "Std", "Stderr")


@pytest.mark.parametrize("inner", list(INNER))
def test_aggregate_to_float_first_then_the_inner_one(inner):
    """Both mappings: Inspect converts the field with aggregate's to_float, then the metric
    converts those floats with its own (numbers pass through a letters table)."""
    values = [{"g": g} for g in "pass fail meh skip pass pass meh".split()]
    ours, theirs = pair(values)
    outer = {"correct": "pass", "incorrect": "fail", "partial": "meh", "noanswer": "skip"}
    i_outer = i_function(outer)
    for ours_f, theirs_f, _ in METRICS:
        expected = i_aggregate("g", theirs_f(to_float=i_function(INNER[inner])),
                               to_float=i_outer)(theirs)  # fmt: skip
        got = st.aggregate("g", ours_f(to_float=INNER[inner]), to_float=outer)(ours)
        assert close(got, expected), (ours_f, got, expected)


def test_aggregate_inner_to_float_through_evaluate_scores():
    """The same through the evaluator: records name the inner mapping in agg_params."""
    values = _grades(3)
    ours, theirs = pair(values)
    m = st.aggregate("g", st.accuracy(to_float={"P": 0.0}))
    (rec,) = st.evaluate_scores(ours, [m])
    expected = i_aggregate("g", METRICS[0][1](to_float=i_function({"P": 0.0})))(theirs)
    assert close(rec.value, expected)
    assert rec.parameters["agg_params"]["to_float"]["values"] == {"P": 0.0}


CUSTOM = {"correct": "pass", "incorrect": "fail", "partial": "meh", "noanswer": "skip"}


def test_custom_sentinels_in_the_inner_metric():
    """The inner metric's own sentinels: before the fix assay built the frame with the
    default conversion first and refused 'pass'."""
    values = [{"g": g} for g in "pass fail meh pass skip pass".split()]
    ours, theirs = pair(values)
    for ours_f, theirs_f, _ in METRICS:
        expected = i_aggregate("g", theirs_f(to_float=i_function(CUSTOM)))(theirs)
        assert close(st.aggregate("g", ours_f(to_float=CUSTOM))(ours), expected)


@pytest.mark.parametrize("reducer", ["mean", "median", "mode", "max", "pass_at_2"])
@pytest.mark.parametrize("mapping", [{"P": 0.0}, {"N": 1.0}, CUSTOM])
def test_with_epochs_aggregate_equals_the_metric_on_the_key(reducer, mapping):
    """With several epochs assay converts them with the metric's own mapping (see
    test_stats_inspect_to_float); aggregate's inner mapping does the same, so
    aggregate(key, metric(to_float=m)) is the metric's record for that key."""
    rng = np.random.default_rng(7)
    letters = list("CIPN") if mapping is not CUSTOM else ["pass", "fail", "meh", "skip"]
    scores = [st.SampleScore(st.Score({"g": str(rng.choice(letters)), "x": 1.0}), i, e)
              for i in range(12) for e in (1, 2, 3)]  # fmt: skip
    for ours_f, _, name in METRICS:
        (agg,) = st.evaluate_scores(scores, [st.aggregate("g", ours_f(to_float=mapping))],
                                    reducers=[reducer])  # fmt: skip
        plain = st.evaluate_scores(scores, [ours_f(to_float=mapping)], reducers=[reducer])
        want = plain.get(name, score_key="g").value
        assert close(agg.value, want), (name, reducer, agg.value, want)
