"""Differential tests against Inspect AI: each metric and reducer with its own ``to_float``.

Inspect converts twice: a reducer converts the epochs with its ``value_to_float`` (mean,
median, max, pass_at, pass_k, at_least; mode counts raw values), and a metric converts
the reduced value with its ``to_float``. assay's metric mapping also converts the epochs
when the reducer has no mapping of its own, so the Inspect side is given, for the reducer,
the reducer's own mapping when assay's has one, else the metric's: then both tools say
the same thing about every value. Several metrics with different mappings run in ONE
assay evaluation and are told apart by their records' ``to_float`` parameter.
"""

import numpy as np
import pytest
from inspect_ai._eval.task.results import reduce_scores as i_reduce_scores
from inspect_ai.scorer import SampleScore as ISampleScore
from inspect_ai.scorer import Score as IScore
from inspect_ai.scorer import accuracy as i_accuracy
from inspect_ai.scorer import at_least as i_at_least
from inspect_ai.scorer import ci as i_ci
from inspect_ai.scorer import ci_wilson as i_ci_wilson
from inspect_ai.scorer import grouped as i_grouped
from inspect_ai.scorer import max_score as i_max_score
from inspect_ai.scorer import mean as i_mean
from inspect_ai.scorer import mean_score as i_mean_score
from inspect_ai.scorer import median_score as i_median_score
from inspect_ai.scorer import mode_score as i_mode_score
from inspect_ai.scorer import pass_at as i_pass_at
from inspect_ai.scorer import std as i_std
from inspect_ai.scorer import stderr as i_stderr
from inspect_ai.scorer import value_to_float as i_value_to_float
from inspect_ai.scorer import var as i_var
from stats_inspect_helpers import close

import assay.stats as st
from assay.stats.value_mapping import as_mapping

GRADES = {"correct": "pass", "incorrect": "fail", "partial": "meh", "noanswer": "skip"}

# assay mapping -> the same conversion as an Inspect function
MAPPINGS = {
    "default": None,
    "P is 0": {"P": 0.0},
    "P is 1": {"values": {"P": 1.0}},
}


def i_function(mapping):
    """The Inspect ``to_float`` function doing what the assay mapping does."""
    m = st.ValueMapping() if mapping is None else st.ValueMapping(**_fields(mapping))
    base = i_value_to_float(m.correct, m.incorrect, m.partial, m.noanswer)

    def to_float(value):
        if isinstance(value, str) and value in m.values:
            return m.values[value]
        return base(value)

    return to_float


def _fields(mapping):
    return mapping if set(mapping) <= {*GRADES, "values"} else {"values": mapping}


# assay reducer factory, Inspect reducer factory (None: takes no mapping), name
REDUCERS = [
    (st.mean_score, i_mean_score, "mean"),
    (st.median_score, i_median_score, "median"),
    (st.max_score, i_max_score, "max"),
    (lambda **kw: st.get_reducer("mode"), None, "mode"),
    (lambda **kw: st.pass_at(2, **kw), lambda **kw: i_pass_at(2, **kw), "pass_at_2"),
    (lambda **kw: st.at_least(2, **kw), lambda **kw: i_at_least(2, **kw), "at_least_2"),
]

METRICS = [
    (st.accuracy, i_accuracy, "Accuracy"),
    (st.mean, i_mean, "Mean"),
    (st.var, i_var, "Var"),
    (st.std, i_std, "Std"),
    (st.stderr, i_stderr, "Stderr"),
]


def _epoch_scores(seed, n_samples=40, pool=("C", "I", "P", "N", "C", "P", 0.25, True)):
    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    for sid in range(n_samples):
        topic = f"t{sid % 3}"
        for epoch in range(1, int(rng.integers(2, 5)) + 1):
            v = pool[int(rng.integers(0, len(pool)))]
            ours.append(st.SampleScore(st.Score(v), sid, epoch, {"topic": topic}))
            theirs.append(
                ISampleScore(score=IScore(value=v), sample_id=sid, sample_metadata={"topic": topic})
            )
    return ours, theirs


def _inspect_value(theirs, i_reducer, i_metric):
    return i_metric(i_reduce_scores(theirs, i_reducer))


def _i_reducer(i_factory, reducer_fn, metric_fn):
    if i_factory is None:
        return i_mode_score()
    return i_factory(value_to_float=reducer_fn if reducer_fn is not None else metric_fn)


# mode takes no mapping of its own (it counts raw values), in Inspect as here
CASES = [(r, m) for r in REDUCERS for m in (None, "P is 1") if r[1] is not None or m is None]


@pytest.mark.parametrize(
    ("reducer", "reducer_mapping"), CASES, ids=[f"{r[2]}-{m}" for r, m in CASES]
)
def test_metrics_with_different_mappings_in_one_evaluation(reducer, reducer_mapping):
    ours_factory, i_factory, name = reducer
    r_map = MAPPINGS[reducer_mapping] if reducer_mapping else None
    r = ours_factory(to_float=r_map) if r_map is not None else ours_factory()
    compared = 0
    for seed in (1, 2, 3):
        ours, theirs = _epoch_scores(seed)
        metric_fns = [f(to_float=m) for f, _, _ in METRICS for m in MAPPINGS.values()]
        recs = st.evaluate_scores(ours, metric_fns, reducers=[r])
        assert len(recs) == len(metric_fns)
        for rec, (metric, (key, mapping)) in zip(
            recs, [(m, kv) for m in METRICS for kv in MAPPINGS.items()]
        ):
            _, i_metric, type_ = metric
            assert rec.type == type_ and rec.parameters["reducer"] == name
            assert rec.parameters.get("to_float") == (
                None if mapping is None else as_mapping(mapping).to_dict()
            ), key
            assert rec.parameters.get("reducer_to_float") == (
                None if r_map is None else as_mapping(r_map).to_dict()
            )
            f = i_function(mapping)
            i_r = _i_reducer(i_factory, i_function(r_map) if r_map else None, f)
            expected = _inspect_value(theirs, i_r, i_metric(to_float=f))
            assert close(rec.value, expected), (name, type_, key, rec.value, expected)
            compared += 1
    assert compared == 3 * len(METRICS) * len(MAPPINGS)


def test_two_accuracies_differ_where_the_partial_letter_counts_differently():
    ours, theirs = _epoch_scores(7, pool=("C", "P", "I"))
    recs = st.evaluate_scores(
        ours, [st.accuracy(), st.accuracy(to_float={"P": 0.0})], reducers=["mode"]
    )
    half, zero = recs
    assert half.value > zero.value
    assert "to_float" not in half.parameters
    assert zero.parameters["to_float"]["values"] == {"P": 0.0}
    reduced = i_reduce_scores(theirs, i_mode_score())
    assert close(half.value, i_accuracy()(reduced))
    assert close(zero.value, i_accuracy(to_float=i_function({"P": 0.0}))(reduced))


@pytest.mark.parametrize("all_", ["samples", "groups"])
def test_grouped_metric_with_its_own_mapping(all_):
    compared = 0
    for seed in (4, 5):
        ours, theirs = _epoch_scores(seed)
        for mapping in MAPPINGS.values():
            f = i_function(mapping)
            g = st.grouped(st.accuracy(to_float=mapping), "topic", all=all_)
            got = st.evaluate_scores(ours, [g, st.grouped(st.accuracy(), "topic", all=all_)])
            reduced = i_reduce_scores(theirs, i_mean_score(value_to_float=f))
            expected = i_grouped(i_accuracy(to_float=f), "topic", all=all_)(reduced)
            mine = got[:4]  # the records of g come first, then the default accuracy's
            assert len(got) == 8
            for m in mine:
                assert m.parameters.get("to_float") == _dict(mapping)
                assert close(m.value, expected[m.parameters["group"]])
                compared += 1
    assert compared == 2 * len(MAPPINGS) * 4


def _dict(mapping):
    return None if mapping is None else as_mapping(mapping).to_dict()


def test_intervals_with_their_own_mapping():
    compared = 0
    for seed in (8, 9):
        ours, theirs = _epoch_scores(seed, pool=("C", "I", "P", "N"))
        for mapping in MAPPINGS.values():
            f = i_function(mapping)
            reduced = i_reduce_scores(theirs, i_mean_score(value_to_float=f))
            recs = st.evaluate_scores(
                ours, [st.ci(0.9, to_float=mapping), st.ci_wilson(0.9, to_float=mapping)]
            )
            for rec, i_metric in zip(recs, [i_ci(0.9, to_float=f), i_ci_wilson(0.9, to_float=f)]):
                expected = i_metric(reduced)
                for k in ("lower", "upper"):
                    assert close(rec.value[k], expected[k])
                    compared += 1
    assert compared == 2 * len(MAPPINGS) * 4


def test_custom_sentinels_per_metric_and_reducer():
    """String sentinels with a values table, on the metric and on the reducer (max picks
    by the reducer's mapping, the metric converts the chosen raw value with its own)."""
    pool = ("pass", "fail", "meh", "skip", "pass", 0.5)
    ours, theirs = _epoch_scores(10, pool=pool)
    metric_map = {**GRADES, "values": {"meh": 0.0}}
    reducer_map = {**GRADES, "values": {"meh": 2.0}}
    recs = st.evaluate_scores(
        ours,
        [st.mean(to_float=metric_map), st.stderr(to_float=GRADES)],
        reducers=[st.max_score(to_float=reducer_map), st.mean_score(to_float=reducer_map)],
    )
    compared = 0
    for rec in recs:
        reducer = rec.parameters["reducer"]
        i_r = {"max": i_max_score, "mean": i_mean_score}[reducer]
        reduced = i_reduce_scores(theirs, i_r(value_to_float=i_function(reducer_map)))
        metric_map_ = metric_map if rec.type == "Mean" else GRADES
        i_metric = {"Mean": i_mean, "Stderr": i_stderr}[rec.type]
        assert close(rec.value, i_metric(to_float=i_function(metric_map_))(reduced))
        compared += 1
    assert compared == 4


def test_mapping_survives_spec_state_and_merge():
    ours, _ = _epoch_scores(11)
    metrics = [st.accuracy(to_float={"P": 0.0}), st.grouped(st.mean(to_float={"P": 1}), "topic")]
    reducers = [st.median_score(to_float={"P": 0.0}), "mean"]
    a = st.ScoreEvaluator(metrics, reducers).add(ours[:30])
    b = st.ScoreEvaluator(metrics, reducers).add(ours[30:])
    again = st.ScoreEvaluator.from_state(a.merge(b).state())
    assert again.config() == a.config()
    assert list(again.compute()) == list(st.evaluate_scores(ours, metrics, reducers))
    other = st.ScoreEvaluator([st.accuracy(to_float={"P": 0.5})], reducers)
    with pytest.raises(Exception, match="config"):
        a.merge(other)
