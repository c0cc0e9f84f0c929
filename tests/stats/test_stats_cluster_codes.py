"""Clustered stderr from integer keys (offset codes, no hash table) against statsmodels."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from assay.stats.compute import clustered_stderr


@pytest.mark.parametrize(
    "keys",
    [
        np.arange(300) % 7,  # dense from 0
        (np.arange(300) % 11) * 3 - 20,  # negative, with unused values between keys
        (np.arange(300) % 5) * 10**9,  # too wide a span: factorised instead
        (np.arange(300) % 4).astype(np.uint8),
    ],
)
def test_clustered_stderr_matches_statsmodels(keys: np.ndarray) -> None:
    rng = np.random.default_rng(3)
    y = rng.normal(size=keys.size) + keys % 3
    fit = sm.OLS(y, np.ones(keys.size)).fit(
        cov_type="cluster", cov_kwds={"groups": np.unique(keys, return_inverse=True)[1]}
    )
    assert clustered_stderr(y, keys) == pytest.approx(float(fit.bse[0]), rel=1e-12)
