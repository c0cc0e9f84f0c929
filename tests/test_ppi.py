"""The PPI++ mean (assay.uncertainty.ppi) against ppi-python, its cluster bootstrap against a
brute-force loop over the same draws, and a small coverage simulation with a biased judge."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import InvalidInputError
from assay.uncertainty.clusters import Clusters, resample_weights
from assay.uncertainty.ppi import ppi_cluster_interval, ppi_mean

ppi_py = pytest.importorskip("ppi_py")


def _data(seed: int, n: int, big_n: int, binary: bool) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    if binary:
        y = (rng.random(n + big_n) < 0.6).astype(float)
        flip = rng.random(n + big_n) < 0.25
        yhat = np.where(flip, 1.0 - y, y)
    else:
        y = rng.normal(3.0, 1.0, n + big_n)
        yhat = 0.7 * y + rng.normal(0.4, 0.6, n + big_n)
    return y[:n], yhat[:n], yhat[n:]


def _reference(y, yhat, yhat_u, level, lam=None):
    est = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=1.0 - level, lam=lam)
    return float(np.squeeze(est)), float(np.squeeze(lo)), float(np.squeeze(hi))


@pytest.mark.parametrize("binary", [False, True], ids=["mean", "proportion"])
@pytest.mark.parametrize("fraction", [0.02, 0.1, 0.3, 0.7])
@pytest.mark.parametrize("seed", range(4))
def test_matches_ppi_python(binary: bool, fraction: float, seed: int) -> None:
    total = 600
    n = max(3, int(total * fraction))
    y, yhat, yhat_u = _data(seed, n, total - n, binary)
    for level in (0.9, 0.95):
        e = ppi_mean(y, yhat, yhat_u, level=level)
        want = _reference(y, yhat, yhat_u, level)
        assert (e.estimate, e.ci_low, e.ci_high) == pytest.approx(want, abs=1e-9, rel=0)
        assert (e.n_labeled, e.n_unlabeled) == (n, total - n)
        assert 0.0 <= e.lam <= 1.0


@pytest.mark.parametrize("lam", [0.0, 0.35, 1.0])
def test_fixed_lambda_matches_ppi_python(lam: float) -> None:
    y, yhat, yhat_u = _data(7, 40, 300, False)
    e = ppi_mean(y, yhat, yhat_u, level=0.95, lam=lam)
    want = _reference(y, yhat, yhat_u, 0.95, lam=lam)
    assert (e.estimate, e.ci_low, e.ci_high) == pytest.approx(want, abs=1e-9, rel=0)
    if lam == 0.0:  # the classical estimate: the labels' mean
        assert e.estimate == pytest.approx(y.mean(), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(2, 60),
    st.integers(1, 300),
    st.booleans(),
)
def test_matches_ppi_python_on_random_data(seed: int, n: int, big_n: int, binary: bool) -> None:
    y, yhat, yhat_u = _data(seed, n, big_n, binary)
    if np.var(np.concatenate([yhat, yhat_u])) == 0:  # the reference's NaN edge (below)
        return
    e = ppi_mean(y, yhat, yhat_u, level=0.9)
    want = _reference(y, yhat, yhat_u, 0.9)
    assert (e.estimate, e.ci_low, e.ci_high) == pytest.approx(want, abs=1e-9, rel=0)


def test_constant_judge_falls_back_to_the_labels() -> None:
    y, yhat_u = np.array([1.0, 0.0, 1.0, 1.0]), np.full(10, 0.5)
    e = ppi_mean(y, np.full(4, 0.5), yhat_u, level=0.95)
    assert e.lam == 0.0 and e.estimate == pytest.approx(0.75)
    half = NormalDist().inv_cdf(0.975) * np.sqrt(np.var(y) / 4)
    assert (e.ci_low, e.ci_high) == pytest.approx((0.75 - half, 0.75 + half))


def test_no_unlabelled_item_is_the_labels_mean() -> None:
    y, yhat = np.array([3.0, 1.0, 2.0]), np.array([2.0, 1.0, 3.0])
    e = ppi_mean(y, yhat, [], level=0.95)
    assert (e.estimate, e.lam, e.n_unlabeled) == (2.0, 0.0, 0)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (([1.0, 2.0], [1.0], [1.0]), "yhat"),
        (([], [], [1.0]), "y"),
        (([1.0, np.nan], [1.0, 2.0], [1.0]), None),
    ],
)
def test_bad_input_is_named(args, field) -> None:
    with pytest.raises(InvalidInputError) as err:
        ppi_mean(*args)
    assert "ppi" in str(err.value)
    if field:
        assert field in str(err.value)


def test_cluster_bootstrap_equals_a_brute_force_loop() -> None:
    rng = np.random.default_rng(3)
    n, big_n, groups, b = 30, 120, 25, 300
    y, yhat, yhat_u = _data(11, n, big_n, False)
    g, g_u = rng.integers(0, groups, n), rng.integers(0, groups, big_n)
    got = ppi_cluster_interval(y, yhat, yhat_u, g, g_u, level=0.9, num_bootstrap=b, seed=5)

    # the same draws of clusters, materialised: every item repeated as often as its cluster
    # was drawn, and the reference's point estimate on the repeated arrays
    codes = np.concatenate([g, g_u])
    units = Clusters.of(np.arange(codes.size), codes, codes.size)
    reps = []
    for chunk in resample_weights(units, b, 5):
        for wts in chunk.astype(int):
            w, w_u = wts[:n], wts[n:]
            if w.sum() == 0:
                continue
            ys, hs, us = np.repeat(y, w), np.repeat(yhat, w), np.repeat(yhat_u, w_u)
            reps.append(ys.mean() if us.size == 0 else ppi_py.ppi_mean_pointestimate(ys, hs, us))
    lo, hi = np.quantile(np.squeeze(np.array(reps)), [0.05, 0.95])
    assert (got.ci_low, got.ci_high) == pytest.approx((lo, hi), abs=1e-9, rel=0)
    assert got.estimate == pytest.approx(_reference(y, yhat, yhat_u, 0.9)[0], abs=1e-9)


def test_singleton_clusters_approach_the_normal_interval() -> None:
    y, yhat, yhat_u = _data(2, 200, 800, False)
    normal = ppi_mean(y, yhat, yhat_u, level=0.9)
    boot = ppi_cluster_interval(
        y, yhat, yhat_u, np.arange(200), np.arange(200, 1000), level=0.9, num_bootstrap=2000
    )
    width = normal.ci_high - normal.ci_low
    assert abs(boot.ci_low - normal.ci_low) < 0.1 * width
    assert abs(boot.ci_high - normal.ci_high) < 0.1 * width


def _biased_judge(rng: np.random.Generator, n: int, big_n: int) -> tuple[np.ndarray, ...]:
    """Human labels 1 with probability 0.6; the judge says 1 for 90% of the 1s and 40% of
    the 0s: its mean is 0.7, off the truth by 0.1."""
    y = (rng.random(n + big_n) < 0.6).astype(float)
    yhat = np.where(y == 1.0, rng.random(n + big_n) < 0.9, rng.random(n + big_n) < 0.4)
    return y[:n], yhat[:n].astype(float), yhat[n:].astype(float)


def test_coverage_with_a_biased_judge() -> None:
    """A seeded small version of benchmarks/ppi_coverage.py (200 repetitions)."""
    rng = np.random.default_rng(2024)
    z = NormalDist().inv_cdf(0.975)
    ppi_hits = judge_hits = 0
    reps = 200
    for _ in range(reps):
        y, yhat, yhat_u = _biased_judge(rng, 100, 1000)
        e = ppi_mean(y, yhat, yhat_u, level=0.95)
        ppi_hits += e.ci_low <= 0.6 <= e.ci_high
        judged = np.concatenate([yhat, yhat_u])
        half = z * judged.std(ddof=1) / np.sqrt(judged.size)
        judge_hits += judged.mean() - half <= 0.6 <= judged.mean() + half
    assert judge_hits / reps < 0.05
    assert 0.9 <= ppi_hits / reps <= 0.99
