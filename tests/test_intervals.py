"""The shared interval kernels (``assay.uncertainty``): DeLong against the paper's formulas
written out naively, Wilson against statsmodels, the bootstrap's resample stream, and a
fast seeded coverage check (nominal 95% covers 93-97%)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from assay.errors import InvalidInputError
from assay.uncertainty.closed_form import delong, delong_interval, t_interval, wilson
from assay.uncertainty.collapsing import collapse
from assay.uncertainty.intervals import bootstrap, ci_options, percentile
from assay.uncertainty.resampling import resample_counts


def _psi(x: float, y: float) -> float:
    return 1.0 if x > y else 0.5 if x == y else 0.0


def _naive_delong(pos: list[float], neg: list[float]) -> tuple[float, float]:
    """DeLong et al. (1988): theta = mean psi(X_i, Y_j); V10(X_i) = mean_j psi(X_i, Y_j),
    V01(Y_j) = mean_i psi(X_i, Y_j); S10, S01 their sample variances (m - 1, n - 1);
    Var(theta) = S10 / m + S01 / n. Written as a double loop, O(mn)."""
    m, n = len(pos), len(neg)
    v10 = [sum(_psi(x, y) for y in neg) / n for x in pos]
    v01 = [sum(_psi(x, y) for x in pos) / m for y in neg]
    theta = sum(v10) / m
    s10 = sum((v - theta) ** 2 for v in v10) / (m - 1)
    s01 = sum((v - theta) ** 2 for v in v01) / (n - 1)
    return theta, s10 / m + s01 / n


def _midrank_delong(pos: np.ndarray, neg: np.ndarray) -> tuple[float, float]:
    """Sun & Xu (2014): midranks of the pooled sample (T_Z) and of each sample (T_X, T_Y);
    V10_i = (T_Z(X_i) - T_X(X_i)) / n, V01_j = 1 - (T_Z(Y_j) - T_Y(Y_j)) / m."""
    m, n = len(pos), len(neg)
    tz = sps.rankdata(np.concatenate([pos, neg]))
    v10 = (tz[:m] - sps.rankdata(pos)) / n
    v01 = 1.0 - (tz[m:] - sps.rankdata(neg)) / m
    auc = (tz[:m].sum() - m * (m + 1) / 2) / (m * n)
    return auc, v10.var(ddof=1) / m + v01.var(ddof=1) / n


@pytest.mark.parametrize("seed", range(6))
def test_delong_equals_the_papers_formulas(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m, n = rng.integers(2, 30, 2)
    # rounded scores: many ties within and across the classes
    pos = np.sort(np.round(rng.normal(0.6, 0.2, m), 1))
    neg = np.sort(np.round(rng.normal(0.4, 0.2, n), 1))
    auc, var = delong(pos, neg)
    naive_auc, naive_var = _naive_delong(pos.tolist(), neg.tolist())
    assert auc == pytest.approx(naive_auc, abs=1e-12)
    assert var == pytest.approx(naive_var, rel=1e-10, abs=1e-15)
    assert (auc, var) == pytest.approx(_midrank_delong(pos, neg), rel=1e-10, abs=1e-15)


def test_delong_agrees_with_sklearn_auc_and_the_interval_is_normal() -> None:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 300)
    s = rng.normal(0.4 * y, 1.0)
    pos, neg = np.sort(s[y == 1]), np.sort(s[y == 0])
    auc, var = delong(pos, neg)
    assert auc == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    lo, hi = delong_interval(pos, neg, 0.9)
    z = sps.norm.ppf(0.95)
    assert (lo, hi) == pytest.approx((auc - z * var**0.5, auc + z * var**0.5), abs=1e-12)


def test_delong_undefined_with_one_class_or_one_point() -> None:
    assert np.isnan(delong(np.array([]), np.array([0.1]))[0])
    assert np.isnan(delong_interval(np.array([0.5]), np.array([0.1, 0.2]), 0.95)[0])


def test_wilson_equals_statsmodels() -> None:
    from statsmodels.stats.proportion import proportion_confint

    k, n = np.array([0, 3, 17, 50, 99]), np.array([10, 4, 40, 50, 100])
    for level in (0.8, 0.95):
        lo, hi = wilson(k, n, level)
        want = proportion_confint(k, n, alpha=1 - level, method="wilson")
        np.testing.assert_allclose(lo, want[0], atol=1e-12)
        np.testing.assert_allclose(hi, want[1], atol=1e-12)


def test_t_interval_equals_scipy() -> None:
    y = np.random.default_rng(3).normal(size=25)
    lo, hi = t_interval(y.mean(), sps.sem(y), 24, 0.95)
    want = sps.t.interval(0.95, 24, loc=y.mean(), scale=sps.sem(y))
    assert (float(lo), float(hi)) == pytest.approx(want, abs=1e-12)


def test_resample_stream_is_seeded_and_chunk_independent() -> None:
    m = np.array([3, 1, 4, 1, 5])
    a = np.concatenate(list(resample_counts(m, 50, seed=9, chunk_elements=7)))
    b = np.concatenate(list(resample_counts(m, 50, seed=9)))
    c = np.concatenate(list(resample_counts(m, 50, seed=10)))
    assert a.shape == (50, 5) and (a.sum(axis=1) == m.sum()).all()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_collapsed_bootstrap_has_the_per_unit_distribution() -> None:
    """Counts over distinct rows ~ Multinomial(n, m/n): their mean is m and their
    covariance n (diag(p) - p p^T), as summing per-unit uniform draws gives."""
    m = np.array([5, 2, 13])
    w = np.concatenate(list(resample_counts(m, 20000, seed=1)))
    n, p = m.sum(), m / m.sum()
    np.testing.assert_allclose(w.mean(axis=0), m, rtol=0.02)
    np.testing.assert_allclose(np.cov(w.T), n * (np.diag(p) - np.outer(p, p)), atol=0.25)


def test_percentile_leaves_out_undefined_resamples() -> None:
    r = np.array([[1.0, np.nan], [2.0, np.nan], [np.nan, np.nan], [3.0, np.nan]])
    lo, hi = percentile(r, 0.5)
    assert (lo[0], hi[0]) == pytest.approx(np.quantile([1.0, 2.0, 3.0], [0.25, 0.75]).tolist())
    assert np.isnan(lo[1]) and np.isnan(hi[1])


def test_bootstrap_equals_a_python_loop() -> None:
    """The vectorised statistic of count-weighted sums equals re-running a mean on each
    resample materialised as a list of units, with the same counts."""
    y = np.array([0.0, 1.0, 1.0, 0.5, 0.5, 1.0, 0.0])
    uniq, mult, _ = collapse(y)
    reps = bootstrap(lambda w: (w @ uniq[:, 0]) / w.sum(axis=1), mult, 40, seed=2)
    loop = []
    for w in np.concatenate(list(resample_counts(mult, 40, seed=2))):
        units = [v for v, k in zip(uniq[:, 0].tolist(), w.astype(int).tolist()) for _ in range(k)]
        loop.append(sum(units) / len(units))
    np.testing.assert_allclose(reps, loop, rtol=1e-12)


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"ci": 0.0}, "ci"),
        ({"ci": True}, "ci"),
        ({"ci": 0.9, "ci_method": "exact"}, "ci_method"),
        ({"ci": 0.9, "num_bootstrap": 1}, "num_bootstrap"),
        ({"ci": 0.9, "seed": -1}, "seed"),
    ],
)
def test_bad_options_name_the_option(kw: dict, field: str) -> None:
    with pytest.raises(InvalidInputError, match=field):
        ci_options(**kw)


def test_coverage_of_wilson_bootstrap_and_delong_is_nominal() -> None:
    """Seeded simulation with a known truth: 95% intervals cover 93-97% of 400 repetitions
    (binomial sd of the rate at 400 reps: 1.1 points)."""
    rng = np.random.default_rng(2026)
    reps, level = 400, 0.95
    hits = {"wilson": 0, "bootstrap_acc": 0, "delong": 0}
    # accuracy: 200 Bernoulli(0.8) datums; AUC: binormal, 60 pos / 90 neg, true AUC known
    true_auc = sps.norm.cdf(1.0 / np.sqrt(2.0))
    for r in range(reps):
        x = rng.random(200) < 0.8
        k = int(x.sum())
        lo, hi = wilson(k, 200, level)
        hits["wilson"] += lo <= 0.8 <= hi
        acc = bootstrap(lambda w: w[:, 1] / w.sum(axis=1), [200 - k, k], 500, seed=r)
        lo, hi = percentile(acc, level)
        hits["bootstrap_acc"] += lo <= 0.8 <= hi
        pos, neg = np.sort(rng.normal(1.0, 1.0, 60)), np.sort(rng.normal(0.0, 1.0, 90))
        lo, hi = delong_interval(pos, neg, level)
        hits["delong"] += lo <= true_auc <= hi
    rates = {k: v / reps for k, v in hits.items()}
    assert all(0.93 <= r <= 0.97 for r in rates.values()), rates
