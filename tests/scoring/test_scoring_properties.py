"""Hypothesis properties of the scoring metrics and the evaluator."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from assay.errors import UndefinedMetricError
from assay.scoring import (
    ScoringEvaluator,
    cohen_kappa,
    pearson_r,
    prmse_true,
    quadratic_weighted_kappa,
    scoring_tables,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def int_pairs(draw, min_size=2, max_size=40):
    n = draw(st.integers(min_size, max_size))
    h = draw(st.lists(st.integers(-3, 8), min_size=n, max_size=n))
    m = draw(st.lists(st.integers(-3, 8), min_size=n, max_size=n))
    return np.array(h, float), np.array(m, float)


@st.composite
def float_pairs(draw, min_size=2, max_size=40):
    n = draw(st.integers(min_size, max_size))
    fl = st.floats(-10, 10, allow_nan=False, allow_infinity=False).map(lambda x: round(x, 3))
    return np.array(draw(st.lists(fl, min_size=n, max_size=n))), np.array(
        draw(st.lists(fl, min_size=n, max_size=n))
    )


def _qwk_or_none(h, m):
    try:
        return quadratic_weighted_kappa(h, m)
    except UndefinedMetricError:
        return None


@SETTINGS
@given(float_pairs())
def test_qwk_symmetric_bounded(pair):
    h, m = pair
    q = _qwk_or_none(h, m)
    assert q == _qwk_or_none(m, h) or (q is not None and abs(q - _qwk_or_none(m, h)) < 1e-12)
    if q is not None:
        assert -1 - 1e-12 <= q <= 1 + 1e-12


@SETTINGS
@given(float_pairs(), st.randoms(use_true_random=False))
def test_metrics_permutation_invariant(pair, rnd):
    h, m = pair
    idx = list(range(h.size))
    rnd.shuffle(idx)
    q = _qwk_or_none(h, m)
    q2 = _qwk_or_none(h[idx], m[idx])
    assert (q is None and q2 is None) or q == pytest.approx(q2, abs=1e-12)
    assert cohen_kappa(h, m) == pytest.approx(cohen_kappa(h[idx], m[idx]), abs=1e-12)


@SETTINGS
@given(int_pairs())
def test_kappas_equal_sklearn_with_full_labels(pair):
    h, m = pair
    labels = np.arange(min(h.min(), m.min()), max(h.max(), m.max()) + 1)
    assume(labels.size > 1)
    for w in (None, "quadratic"):
        theirs = cohen_kappa_score(h, m, weights=w, labels=labels)
        assume(np.isfinite(theirs))
        assert cohen_kappa(h, m, weights=w) == pytest.approx(theirs, abs=1e-10)
    q = _qwk_or_none(h, m)
    assert q == pytest.approx(
        cohen_kappa_score(h, m, weights="quadratic", labels=labels), abs=1e-10
    )
    assert cohen_kappa(h, m) == pytest.approx(cohen_kappa(m, h), abs=1e-12)
    assert cohen_kappa(h, m) <= 1 + 1e-12


@SETTINGS
@given(float_pairs(min_size=3))
def test_pearson_bounded_and_affine_invariant(pair):
    h, m = pair
    assume(h.min() < h.max() and m.min() < m.max())
    r = pearson_r(h, m)
    assert -1 <= r <= 1
    assert pearson_r(2 * h + 5, m - 3) == pytest.approx(r, abs=1e-9)


@SETTINGS
@given(st.integers(3, 30), st.integers(0, 2**31 - 1), st.floats(-5, 5))
def test_prmse_shift_invariant_and_rater_order(n, seed, shift):
    rng = np.random.default_rng(seed)
    r = rng.integers(1, 6, (n, 3)).astype(float)
    r[rng.random((n, 3)) < 0.4] = np.nan
    r[:, 0] = np.where(np.isnan(r).all(axis=1), 3.0, r[:, 0])
    r[0, :2] = [2.0, 4.0]  # at least one multiply-rated response
    m = rng.normal(3, 1, n)
    try:
        p = prmse_true(m, r)
    except UndefinedMetricError:
        p = None
    assume(p is not None)
    assert prmse_true(m + shift, r + shift) == pytest.approx(p, rel=1e-8, abs=1e-8)
    assert prmse_true(m, r[:, ::-1]) == pytest.approx(p, rel=1e-10, abs=1e-10)
    padded = np.column_stack([r, np.full(n, np.nan)])  # an extra rater who rated nothing
    assert prmse_true(m, padded) == pytest.approx(p, rel=1e-10, abs=1e-10)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(4, 60), st.integers(0, 2**31 - 1), st.integers(1, 4))
def test_evaluator_batches_equal_one_batch(n, seed, k):
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 5, n).astype(float)
    df = pd.DataFrame(
        {
            "h": h,
            "m": h + rng.normal(0, 0.8, n).round(2),
            "h2": np.where(rng.random(n) < 0.5, rng.integers(1, 5, n), np.nan),
            "g": rng.choice(["a", "b", "c"], n),
        }
    )
    one = scoring_tables(df, human="h", system="m", human2="h2", group_columns=["g"])
    ev = ScoringEvaluator(human="h", system="m", human2="h2", group_columns=["g"])
    parts = [p for p in np.array_split(rng.permutation(n), k) if p.size]
    evs = []
    for p in parts:
        e = ScoringEvaluator(human="h", system="m", human2="h2", group_columns=["g"])
        e.add(df.iloc[p])
        evs.append(e)
    ev = evs[0]
    for e in evs[1:]:
        ev.merge(e)
    many = ev.tables()
    for name, t in one.tables.items():
        u = many.tables[name]
        assert list(u.index) == list(t.index), name
        num = t.select_dtypes("number").columns
        np.testing.assert_allclose(
            u.loc[t.index, num].to_numpy(float),
            t[num].to_numpy(float),
            rtol=1e-8,
            atol=1e-9,
            err_msg=name,
        )
