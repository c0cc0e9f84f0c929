"""Clustered stderr against statsmodels' OLS with cluster-robust covariance (CR1)."""

import numpy as np
import pytest
import statsmodels.api as statsmodels_api

from assay.stats import (
    ScoreFrame,
    compute,
    stderr,
)


def _statsmodels_cluster_se(y, groups):
    codes = np.unique(groups, return_inverse=True)[1]
    fit = statsmodels_api.OLS(y, np.ones((len(y), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": codes}
    )
    return float(fit.bse[0])


def _statsmodels_plain_se(y):
    return float(statsmodels_api.OLS(y, np.ones((len(y), 1))).fit().bse[0])


@pytest.mark.parametrize("seed", range(12))
def test_clustered_stderr_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 3000))
    g = int(rng.integers(2, min(n, 200) + 1))
    clusters = rng.integers(0, g, n)
    if len(np.unique(clusters)) < 2:
        clusters[0], clusters[1] = 0, 1
    effect = rng.normal(0, 1, g)[clusters]  # within-cluster correlation
    kind = seed % 3
    if kind == 0:
        y = (rng.random(n) < 1 / (1 + np.exp(-effect))).astype(float)
    elif kind == 1:
        y = rng.choice([0.0, 0.5, 1.0], n)
    else:
        y = effect + rng.normal(0, 1, n)
    ours = compute.clustered_stderr(y, clusters)
    theirs = _statsmodels_cluster_se(y, clusters)
    assert ours == pytest.approx(theirs, rel=1e-10)
    compared = 1
    # through the metric, with string cluster keys from metadata
    f = ScoreFrame.from_arrays(
        y, metadata={"doc": np.array([f"d{c}" for c in clusters], dtype=object)}
    )
    assert stderr(cluster="doc")(f) == pytest.approx(theirs, rel=1e-10)
    compared += 1
    assert compared == 2 and n > 0


def test_plain_stderr_matches_statsmodels_nonrobust():
    y = np.random.default_rng(3).normal(size=500)
    assert stderr()(y) == pytest.approx(_statsmodels_plain_se(y), rel=1e-12)


def test_few_clusters_hand_and_statsmodels_agree():
    y = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    c = np.array([0, 0, 1, 1, 2, 2])
    assert compute.clustered_stderr(y, c) == pytest.approx(np.sqrt(1 / 12), rel=1e-14)
    assert _statsmodels_cluster_se(y, c) == pytest.approx(np.sqrt(1 / 12), rel=1e-12)
