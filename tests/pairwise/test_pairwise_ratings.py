"""Bradley-Terry against reference logistic regressions, interval coverage, length control."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from assay.llm.pairwise.length import length_controlled_win_rate
from assay.llm.pairwise.ratings import (
    bradley_terry,
    debiased_outcomes,
    fit_bradley_terry,
    pairwise_win_rates,
)


def _simulate(strengths, n_questions, rng, tie_rate=0.1):
    """Outcomes of every pair on every question from known log-strengths (ties at tie_rate)."""
    n = len(strengths)
    rows = []
    for q in range(n_questions):
        for i in range(n):
            for j in range(i + 1, n):
                p = 1.0 / (1.0 + np.exp(-(strengths[i] - strengths[j])))
                u = rng.random()
                y = 0.5 if u < tie_rate else float(rng.random() < p)
                rows.append((f"q{q}", f"m{i}", f"m{j}", y))
    return pd.DataFrame(rows, columns=["index", "model", "opponent", "outcome"])


def _design(outcomes, n):
    """Logistic-regression rows e_i - e_j; a tie is half a win and half a loss (weights)."""
    X, y, w = [], [], []
    for i, j, v in zip(outcomes["model"], outcomes["opponent"], outcomes["outcome"]):
        row = np.zeros(n)
        row[int(i[1:])], row[int(j[1:])] = 1.0, -1.0
        for target, weight in ((1.0, v), (0.0, 1.0 - v)):
            if weight > 0:
                X.append(row), y.append(target), w.append(weight)
    return np.array(X), np.array(y), np.array(w)


def _wins(outcomes, n):
    W = np.zeros((n, n))
    for i, j, v in zip(outcomes["model"], outcomes["opponent"], outcomes["outcome"]):
        W[int(i[1:]), int(j[1:])] += v
        W[int(j[1:]), int(i[1:])] += 1.0 - v
    return W


def test_bradley_terry_equals_statsmodels_logit_without_penalty():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(1)
    truth = np.array([0.8, 0.2, -0.1, -0.9])
    o = _simulate(truth, 60, rng)
    X, y, w = _design(o, 4)
    ref = sm.GLM(y, X[:, 1:], family=sm.families.Binomial(), freq_weights=w).fit(tol=1e-12)
    # Model 0 is the baseline (theta_0 = 0) in the reference; compare differences.
    ref_theta = np.concatenate([[0.0], ref.params])
    ours = fit_bradley_terry(_wins(o, 4), l2=0.0)
    compared = 0
    for i in range(4):
        for j in range(4):
            assert ours[i] - ours[j] == pytest.approx(ref_theta[i] - ref_theta[j], abs=1e-7)
            compared += 1
    assert compared == 16
    assert abs(ours.mean()) < 1e-12


def test_bradley_terry_equals_sklearn_l2_logistic_regression():
    lm = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(2)
    o = _simulate(np.array([1.0, 0.0, -0.5, 0.3, -0.8]), 30, rng)
    X, y, w = _design(o, 5)
    l2 = 0.5
    ref = lm.LogisticRegression(C=1.0 / l2, fit_intercept=False, tol=1e-12, max_iter=10_000)
    ref.fit(X, y, sample_weight=w)
    ours = fit_bradley_terry(_wins(o, 5), l2=l2)
    np.testing.assert_allclose(ours, ref.coef_[0], atol=1e-6)
    assert len(ours) == 5


def test_bradley_terry_recovers_known_strengths():
    rng = np.random.default_rng(3)
    truth = np.array([1.2, 0.4, -0.3, -1.3])
    fit = bradley_terry(_simulate(truth, 400, rng, tie_rate=0.0), n_boot=50, seed=0)
    np.testing.assert_allclose(fit.theta, truth - truth.mean(), atol=0.15)
    assert list(fit.table()["model"]) == ["m0", "m1", "m2", "m3"]


def test_bootstrap_intervals_cover_the_true_differences_about_95_percent():
    truth = np.array([0.6, 0.0, -0.4])
    centred = truth - truth.mean()
    hits = total = 0
    for rep in range(60):
        rng = np.random.default_rng(100 + rep)
        fit = bradley_terry(_simulate(truth, 80, rng), n_boot=200, seed=rep, l2=0.0)
        lo = (fit.ci_low - 1000.0) / (400.0 / np.log(10.0))
        hi = (fit.ci_high - 1000.0) / (400.0 / np.log(10.0))
        hits += int(np.sum((lo <= centred) & (centred <= hi)))
        total += 3
    coverage = hits / total
    assert total == 180
    assert 0.88 <= coverage <= 0.995, coverage


def test_bootstrap_is_seeded_and_order_free():
    rng = np.random.default_rng(4)
    o = _simulate(np.array([0.5, 0.0, -0.5]), 20, rng)
    a = bradley_terry(o, n_boot=30, seed=7)
    b = bradley_terry(o.sample(frac=1.0, random_state=1), n_boot=30, seed=7)
    np.testing.assert_allclose(a.ci_low, b.ci_low)
    c = bradley_terry(o, n_boot=30, seed=8)
    assert not np.allclose(a.ci_low, c.ci_low)


def test_debiased_outcomes_count_a_pair_once():
    rows = pd.DataFrame(
        {
            "index": ["q1", "q1", "q2", "q2", "q3", "q4", "q5"],
            "model_a": ["r", "m", "r", "m", "m", "r", "r"],
            "model_b": ["m", "r", "m", "r", "r", "m", "m"],
            "status": ["ok", "ok", "ok", "ok", "ok", "em", "failed"],
            "choice": ["B", "A", "A", "A", "C", "", ""],
        }
    )
    o = debiased_outcomes(rows).set_index("index")
    assert list(o.index) == ["q1", "q2", "q3", "q4"]
    assert (o.loc["q1", "model"], o.loc["q1", "outcome"]) == ("m", 1.0)  # consistent win
    assert o.loc["q2", "outcome"] == 0.5  # inconsistent: a tie
    assert o.loc["q3", "outcome"] == 0.5  # both good, one order
    assert o.loc["q4", "outcome"] == 0.5  # identical answers
    wr = pairwise_win_rates(debiased_outcomes(rows)).set_index(["model", "opponent"])
    assert wr.loc[("m", "r"), "win_rate"] == pytest.approx(2.5 / 4)


def _verbose_judge(n, strength, rng, quality_gap=0.0):
    """The verbose model's answers are longer; the judge rewards length with ``strength``."""
    len_m = rng.normal(1500, 300, n).clip(100)
    len_r = rng.normal(900, 300, n).clip(100)
    d = len_m - len_r
    z = np.tanh(d / d.std())
    p = 1.0 / (1.0 + np.exp(-(quality_gap + strength * z)))
    y = (rng.random(n) < p).astype(float)
    return pd.DataFrame(
        {
            "index": [f"q{i}" for i in range(n)],
            "model": "m",
            "opponent": "r",
            "outcome": y,
            "length_model": len_m,
            "length_opponent": len_r,
        }
    )


def test_length_controlled_win_rate_removes_a_known_length_preference():
    rng = np.random.default_rng(5)
    o = _verbose_judge(20000, strength=2.0, rng=rng)
    lc = length_controlled_win_rate(o, "m", "r", n_boot=100, seed=0)
    assert lc.raw_win_rate > 0.75  # raw: the verbose model "wins"
    assert lc.win_rate == pytest.approx(0.5, abs=0.03)  # at equal length: no better
    assert lc.win_rate_ci[0] < 0.5 < lc.win_rate_ci[1]
    assert lc.length_coefficient == pytest.approx(2.0, abs=0.3)
    assert lc.length_coefficient_ci[0] > 1.0


def test_length_controlled_win_rate_keeps_a_real_quality_gap():
    rng = np.random.default_rng(6)
    o = _verbose_judge(2000, strength=0.0, rng=rng, quality_gap=1.0)
    lc = length_controlled_win_rate(o, "m", "r", n_boot=100, seed=0)
    expected = 1.0 / (1.0 + np.exp(-1.0))
    assert lc.win_rate == pytest.approx(expected, abs=0.04)
    assert lc.length_coefficient_ci[0] < 0.0 < lc.length_coefficient_ci[1]
