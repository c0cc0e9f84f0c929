"""The paired tests against their references: McNemar against statsmodels (its interval,
Newcombe's hybrid score interval, against the published value of Fagerland, Lydersen &
Laake's ch. 8 and statsmodels' Wilson intervals), paired t against scipy, DeLong's test
against the paper's formulas written out here (the Mann-Whitney kernel over every
positive-negative pair, O(m n)); the swap invariants by hypothesis."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from assay.compare import delong_test, mcnemar, newcombe_paired, paired_t
from assay.errors import InvalidInputError

# ---------------------------------------------------------------- McNemar


@pytest.mark.parametrize("seed", range(12))
def test_mcnemar_matches_statsmodels_exact(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 300))
    a = rng.random(n) < rng.uniform(0.2, 0.9)
    b = np.where(rng.random(n) < rng.uniform(0.3, 0.95), a, rng.random(n) < 0.5)
    table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    ref = sm_mcnemar(table, exact=True)
    got = mcnemar(a, b)
    assert got.test == "mcnemar" and got.n == n and got.ci_method == "newcombe_hybrid_score"
    assert got.ci == newcombe_paired(*np.ravel(table).tolist())
    assert got.p_value == pytest.approx(ref.pvalue, rel=1e-12, abs=1e-15)
    assert got.diff == pytest.approx(b.mean() - a.mean(), abs=1e-15)


def test_newcombe_interval_matches_the_published_example() -> None:
    # Cavo et al. 2012 in Fagerland, Lydersen & Laake (2017), ch. 8, rows the first
    # measurement: 59 6 / 16 80, estimate -0.0621, 95% CI -0.1186 to -0.0046 (first minus
    # second; ours is the second run minus the first)
    lo, hi = newcombe_paired(59, 6, 16, 80)
    assert (round(lo, 4), round(hi, 4)) == (0.0046, 0.1186)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=4, max_size=4), st.sampled_from([0.8, 0.9, 0.95]))
def test_newcombe_interval_by_its_formula(cells: list[int], level: float) -> None:
    n11, n10, n01, n00 = cells
    n = sum(cells)
    if n == 0:
        return
    lo, hi = newcombe_paired(n11, n10, n01, n00, level)
    d = (n01 - n10) / n
    assert -1.0 <= lo <= d + 1e-12 and d - 1e-12 <= hi <= 1.0
    # swapping the runs negates the interval
    back = newcombe_paired(n11, n01, n10, n00, level)
    assert back == pytest.approx((-hi, -lo), abs=1e-12)
    # phi = 0 (a margin empty or a table near independence): the square-and-add of the two
    # Wilson intervals of statsmodels
    la, ua = proportion_confint(n11 + n10, n, 1 - level, method="wilson")
    lb, ub = proportion_confint(n11 + n01, n, 1 - level, method="wilson")
    pa, pb = (n11 + n10) / n, (n11 + n01) / n
    cross = n11 * n00 - n10 * n01
    if 0 <= cross <= n / 2 or min(n11 + n10, n01 + n00, n11 + n01, n10 + n00) == 0:
        want_lo = d - math.hypot(pb - lb, ua - pa)
        want_hi = d + math.hypot(ub - pb, pa - la)
        assert (lo, hi) == pytest.approx((max(-1, want_lo), min(1, want_hi)), abs=1e-12)
    elif cross < 0:  # negative correlation: wider than the independent square-and-add
        assert hi - lo >= math.hypot(pb - lb, ua - pa) + math.hypot(ub - pb, pa - la) - 1e-12 or (
            lo == -1.0 or hi == 1.0
        )


def test_mcnemar_edges() -> None:
    same = mcnemar([1, 0, 1], [1, 0, 1])  # no discordant unit
    assert same.p_value == 1.0 and same.diff == 0.0
    lopsided = mcnemar([0] * 12, [1] * 12)  # 12 discordant, all one way: 2 / 2^12
    assert lopsided.p_value == pytest.approx(2.0 / 4096, rel=1e-12)
    with pytest.raises(InvalidInputError, match="right .1. or wrong"):
        mcnemar([0, 2], [1, 0])
    with pytest.raises(InvalidInputError, match="same units"):
        mcnemar([0, 1], [1])


# ---------------------------------------------------------------- paired t


@pytest.mark.parametrize("seed", range(10))
def test_paired_t_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 200))
    a = rng.normal(0, 1, n)
    b = a + rng.normal(rng.normal(0, 0.3), rng.uniform(0.1, 2), n)
    ref = stats.ttest_rel(b, a)
    ci = ref.confidence_interval(0.9)
    got = paired_t(a, b, level=0.9)
    assert got.test == "paired_t" and got.n == n
    assert got.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
    assert got.diff / got.se == pytest.approx(ref.statistic, rel=1e-9)
    assert got.ci == pytest.approx((ci.low, ci.high), rel=1e-9)


def test_paired_t_degenerate() -> None:
    assert paired_t([1.0, 2.0], [1.0, 2.0]).p_value == 1.0  # identical runs
    assert paired_t([1.0, 2.0], [2.0, 3.0]).p_value == 0.0  # a constant shift (scipy: t=inf)
    assert math.isnan(paired_t([1.0], [2.0]).p_value)
    with pytest.raises(InvalidInputError, match="NaN"):
        paired_t([1.0, float("nan")], [1.0, 2.0])


# ---------------------------------------------------------------- DeLong


def _psi(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The Mann-Whitney kernel of every (positive x, negative y) pair: 1, 1/2 on a tie, 0."""
    return (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])


def _delong_by_the_paper(y: np.ndarray, scores: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """DeLong, DeLong & Clarke-Pearson (1988), section 2: theta_r = mean of psi over pairs;
    V10_r(x_i) = mean_j psi(x_i, y_j), V01_r(y_j) = mean_i psi(x_i, y_j);
    S10_rs = sum_i (V10_r - theta_r)(V10_s - theta_s) / (m - 1), S01 likewise over n - 1;
    S = S10 / m + S01 / n. Returns (theta, S)."""
    pos, neg = y == 1, y == 0
    m, n = pos.sum(), neg.sum()
    k = len(scores)
    theta, v10, v01 = np.zeros(k), [], []
    for r, s in enumerate(scores):
        kern = _psi(s[pos], s[neg])
        theta[r] = kern.mean()
        v10.append(kern.mean(axis=1))
        v01.append(kern.mean(axis=0))
    s10, s01 = np.zeros((k, k)), np.zeros((k, k))
    for r in range(k):
        for q in range(k):
            s10[r, q] = np.sum((v10[r] - theta[r]) * (v10[q] - theta[q])) / (m - 1)
            s01[r, q] = np.sum((v01[r] - theta[r]) * (v01[q] - theta[q])) / (n - 1)
    return theta, s10 / m + s01 / n


@pytest.mark.parametrize("seed", range(10))
def test_delong_matches_the_papers_formulas(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(6, 150))
    y = (rng.random(n) < rng.uniform(0.2, 0.8)).astype(int)
    y[:2] = [0, 1]
    y[2:4] = [0, 1]
    latent = y + rng.normal(0, 1, n)
    a = np.round(latent + rng.normal(0, 0.8, n), 1)  # rounded: ties within and across classes
    b = np.round(latent + rng.normal(0, rng.uniform(0.3, 1.5), n), 1)
    theta, s = _delong_by_the_paper(y, [a, b])
    c = np.array([-1.0, 1.0])  # the contrast theta_b - theta_a
    se = math.sqrt(c @ s @ c)
    z = (c @ theta) / se
    got = delong_test(y, a, b, level=0.9)
    assert got.test == "delong" and got.n == n
    assert got.diff == pytest.approx(theta[1] - theta[0], abs=1e-12)
    assert got.se == pytest.approx(se, rel=1e-9)
    assert got.p_value == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-9)
    half = stats.norm.ppf(0.95) * se
    assert got.ci == pytest.approx((c @ theta - half, c @ theta + half), rel=1e-9, abs=1e-12)


def test_delong_undefined_and_identical() -> None:
    one_class = delong_test([1, 1, 1], [0.1, 0.2, 0.3], [0.3, 0.2, 0.1])
    assert math.isnan(one_class.diff) and math.isnan(one_class.p_value)
    same = delong_test([0, 0, 1, 1], [0.1, 0.5, 0.4, 0.9], [0.1, 0.5, 0.4, 0.9])
    assert same.diff == 0.0 and same.p_value == 1.0
    with pytest.raises(InvalidInputError, match="labels"):
        delong_test([0, 1], [0.1, 0.2, 0.3], [0.1, 0.2, 0.3])


# ---------------------------------------------------------------- swapping the runs

value = st.floats(-5, 5, allow_nan=False).map(lambda v: round(v, 2))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_swapping_the_runs_negates_the_difference_and_keeps_p(data: st.DataObject) -> None:
    n = data.draw(st.integers(4, 40))
    a = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    b = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    x = np.array(data.draw(st.lists(value, min_size=n, max_size=n)))
    z = np.array(data.draw(st.lists(value, min_size=n, max_size=n)))
    y = np.array([0, 1] + data.draw(st.lists(st.integers(0, 1), min_size=n - 2, max_size=n - 2)))
    for f, args in ((mcnemar, (a, b)), (paired_t, (x, z)), (delong_test, (y, x, z))):
        fwd = f(*args)
        back = f(*args[:-2], args[-1], args[-2])
        assert back.diff == pytest.approx(-fwd.diff, abs=1e-12)
        assert back.p_value == pytest.approx(fwd.p_value, rel=1e-9, nan_ok=True)
        assert fwd.p_value is not None and (math.isnan(fwd.p_value) or 0 <= fwd.p_value <= 1)
