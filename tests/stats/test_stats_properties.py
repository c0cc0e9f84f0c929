"""Hypothesis properties: bounds, permutation invariance, merge of batches == one batch."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as hs

import assay.stats as st
from assay.stats import compute

finite = hs.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
values_lists = hs.lists(finite, min_size=2, max_size=60)
SETTINGS = settings(max_examples=60, deadline=None)


@SETTINGS
@given(values_lists, hs.randoms(use_true_random=False))
def test_basic_metrics_bounds_and_permutation(values, rnd):
    y = np.array(values)
    m = st.mean()(y)
    assert y.min() - 1e-9 * (1 + abs(y.min())) <= m <= y.max() + 1e-9 * (1 + abs(y.max()))
    v = st.var()(y)
    assert v >= 0
    assert st.std()(y) == pytest.approx(math.sqrt(v), rel=1e-9, abs=1e-9)
    assert st.stderr()(y) == pytest.approx(math.sqrt(v / len(y)), rel=1e-9, abs=1e-9)
    shuffled = list(values)
    rnd.shuffle(shuffled)
    for fn in (st.mean(), st.var(), st.stderr()):
        assert fn(shuffled) == pytest.approx(fn(values), rel=1e-9, abs=1e-6)


@SETTINGS
@given(
    hs.lists(
        hs.tuples(hs.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0]), hs.integers(0, 6)),
        min_size=3,
        max_size=80,
    ),
    hs.permutations(list(range(7))),
)
def test_clustered_stderr_invariant_to_relabelling_and_order(rows, relabel):
    y = np.array([r[0] for r in rows])
    c = np.array([r[1] for r in rows])
    assume(len(np.unique(c)) >= 2)
    base = compute.clustered_stderr(y, c)
    assert base >= 0
    assert compute.clustered_stderr(y, np.array(relabel)[c]) == pytest.approx(
        base, rel=1e-9, abs=1e-12
    )
    order = np.argsort(-c, kind="stable")
    assert compute.clustered_stderr(y[order], c[order]) == pytest.approx(base, rel=1e-9, abs=1e-12)
    # merging all clusters into singletons gives the plain CLT stderr
    assert compute.clustered_stderr(y, np.arange(len(y))) == pytest.approx(
        compute.stderr(y), rel=1e-9, abs=1e-12
    )


epoch_rows = hs.lists(
    hs.tuples(
        hs.integers(0, 8),  # sample id
        hs.sampled_from(["C", "I", "P", "N", 0.25, 1.0, None]),
    ),
    min_size=1,
    max_size=50,
)


def _scores(rows):
    seen: dict[int, int] = {}
    out = []
    for sid, v in rows:
        seen[sid] = seen.get(sid, 0) + 1
        out.append(st.SampleScore(st.Score(v), sid, seen[sid], {"g": sid % 3}))
    return out


@SETTINGS
@given(epoch_rows, hs.integers(0, 50), hs.randoms(use_true_random=False))
def test_merge_of_batches_equals_one_batch(rows, cut, rnd):
    scores = _scores(rows)
    metrics = [
        st.accuracy(),
        st.stderr(),
        st.grouped(st.mean(), "g"),
        st.bootstrap_stderr(50, seed=1),
    ]
    reducers = ["mean", "mode", "max", "pass_at_1", "at_least_2"]
    whole = st.evaluate_scores(scores, metrics, reducers)
    cut = min(cut, len(scores))
    left = st.ScoreEvaluator(metrics, reducers).add(scores[:cut])
    right = st.ScoreEvaluator(metrics, reducers).add(scores[cut:])
    merged = left.merge(right).compute()
    assert merged.to_json() == whole.to_json()
    # batches in the other order, one of them as a ScoreFrame: the same records up to order
    plain = [st.accuracy(), st.stderr(), st.grouped(st.mean(), "g")]
    a = st.ScoreEvaluator(plain, reducers).add(st.ScoreFrame.from_scores(scores[cut:]))
    b = st.ScoreEvaluator(plain, reducers).add(scores[:cut])
    _same_records(a.merge(b).compute(), st.evaluate_scores(scores, plain, reducers))
    # order of the scores does not matter (epochs carry their number)
    shuffled = list(scores)
    rnd.shuffle(shuffled)
    again = st.evaluate_scores(shuffled, [st.accuracy(), st.stderr()], reducers)
    for a, b in zip(again, st.evaluate_scores(scores, [st.accuracy(), st.stderr()], reducers)):
        assert a.type == b.type and a.parameters == b.parameters
        assert (a.value is None and b.value is None) or a.value == pytest.approx(
            b.value, rel=1e-9, abs=1e-12
        )


def _key(m):
    return (
        m.type,
        tuple(sorted((k, repr(v)) for k, v in m.parameters.items() if k != "undefined")),
    )


def _same_records(got, want):
    g = {_key(m): m.value for m in got}
    w = {_key(m): m.value for m in want}
    assert g.keys() == w.keys()
    for k, v in w.items():
        assert (v is None and g[k] is None) or g[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k


@SETTINGS
@given(hs.lists(hs.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=12))
def test_reducer_orderings(values):
    scores = [st.Score(v) for v in values]
    r = {name: st.get_reducer(name)(scores).value for name in ["mean", "median", "max", "mode"]}
    lo, hi = min(values), max(values)
    for name, v in r.items():
        assert lo <= float(v) <= hi, name
    assert r["max"] == hi
    n = len(values)
    c = sum(v >= 1.0 for v in values)
    prev_at, prev_hat = -1.0, 2.0
    for k in range(1, n + 1):
        at = st.get_reducer(f"pass_at_{k}")(scores).value
        hat = st.get_reducer(f"pass_k_{k}")(scores).value
        assert hat <= c / n + 1e-12 <= at + 2e-12
        assert at >= prev_at - 1e-12 and hat <= prev_hat + 1e-12  # monotone in k
        prev_at, prev_hat = at, hat
        assert st.get_reducer(f"at_least_{k}")(scores).value == float(c >= k)


@SETTINGS
@given(
    hs.lists(
        hs.tuples(hs.sampled_from([0.0, 1.0, 0.5]), hs.sampled_from("abcd")),
        min_size=1,
        max_size=40,
    )
)
def test_grouped_mean_weighted_by_size_is_the_overall_mean(rows):
    y = np.array([r[0] for r in rows])
    f = st.ScoreFrame.from_arrays(y, metadata={"k": np.array([r[1] for r in rows], dtype=object)})
    out = st.grouped(st.mean(), "k")(f)
    sizes = {g: sum(1 for r in rows if r[1] == g) for g in "abcd"}
    weighted = sum(out[g] * sizes[g] for g in out if g != "all") / len(rows)
    assert weighted == pytest.approx(out["all"], abs=1e-12)
    assert out["all"] == pytest.approx(st.mean()(y), abs=1e-15)


@SETTINGS
@given(hs.lists(finite, min_size=1, max_size=200), hs.integers(0, 2**31))
def test_bootstrap_deterministic_nonnegative_and_bounded(values, seed):
    y = np.array(values)
    means = st.bootstrap_means(y, 20, seed=seed)
    assert np.array_equal(means, st.bootstrap_means(y, 20, seed=seed))
    span = 1e-9 * (1 + np.abs(y).max())
    assert np.all(means >= y.min() - span) and np.all(means <= y.max() + span)
    assert compute.bootstrap_stderr(y, 20, seed) >= 0
