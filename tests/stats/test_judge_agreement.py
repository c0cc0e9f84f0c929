"""JudgeAgreement's measures against scikit-learn and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score

from assay.stats.judge_agreement import judge_agreement


@pytest.mark.filterwarnings("ignore::UserWarning")  # scikit-learn on a single label
@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 80), st.integers(2, 5))
def test_categorical_against_sklearn_and_scipy(seed: int, n: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(1, k + 1, n).astype(float)
    yhat = np.where(rng.random(n) < 0.7, y, rng.integers(1, k + 1, n)).astype(float)
    v, why = judge_agreement(y, yhat)
    assert v["agreement"] == pytest.approx(np.mean(y == yhat))
    assert v["mae"] == pytest.approx(np.mean(np.abs(y - yhat)))
    want = cohen_kappa_score(y, yhat)
    if np.isnan(want):
        assert v["cohen_kappa"] is None and "cohen_kappa" in why
    else:
        assert v["cohen_kappa"] == pytest.approx(want, abs=1e-12)
    if np.ptp(y) and np.ptp(yhat):
        assert v["pearson"] == pytest.approx(sps.pearsonr(y, yhat)[0], abs=1e-12)
        assert v["spearman"] == pytest.approx(sps.spearmanr(y, yhat)[0], abs=1e-12)
    else:
        assert v["pearson"] is None and "pearson" in why


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(3, 80))
def test_numeric_against_scipy(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.normal(3.0, 1.0, n)
    yhat = 0.6 * y + rng.normal(0.0, 0.7, n)
    v, why = judge_agreement(y, yhat)
    assert "agreement" not in v and "cohen_kappa" not in v and not why
    assert v["pearson"] == pytest.approx(sps.pearsonr(y, yhat)[0], abs=1e-12)
    assert v["spearman"] == pytest.approx(sps.spearmanr(y, yhat)[0], abs=1e-12)
    assert v["mae"] == pytest.approx(np.mean(np.abs(y - yhat)), abs=1e-12)


def test_one_label_has_no_correlation() -> None:
    v, why = judge_agreement([1.0], [1.0])
    assert v["pearson"] is None and "at least 2" in why["spearman"]
    assert v["agreement"] == 1.0 and v["cohen_kappa"] is None
