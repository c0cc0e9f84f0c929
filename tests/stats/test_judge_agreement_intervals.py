"""JudgeAgreement's intervals: each resample's measures are scikit-learn's and scipy's on the
items it draws, and the interval is the engine's percentile of them (clusters drawn whole)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score

from assay.stats.judge_agreement import agreement_intervals, agreement_record, agreement_tally
from assay.uncertainty.intervals import ci_options, percentile
from assay.uncertainty.resampling import resample_counts


def _pairs(seed: int, n: int, integer: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if integer:
        y = rng.integers(1, 4, n).astype(float)
        return y, np.where(rng.random(n) < 0.7, y, rng.integers(1, 4, n)).astype(float)
    y = rng.normal(0.0, 1.0, n)
    return y, 0.5 * y + rng.normal(0.0, 0.8, n)


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::RuntimeWarning")
@pytest.mark.parametrize("integer", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_resample_is_the_peers_on_the_drawn_items(seed: int, integer: bool) -> None:
    y, yhat = _pairs(seed, 25, integer)
    tally = agreement_tally(y, yhat)
    rng = np.random.default_rng(seed + 10)
    w = rng.multinomial(25, np.full(25, 1 / 25), size=20).astype(float)
    got = tally.values(w)
    names = [k[1] for k in tally.keys]
    for r in range(w.shape[0]):
        idx = np.repeat(np.arange(25), w[r].astype(int))
        a, b = y[idx], yhat[idx]
        want = {"mae": np.mean(np.abs(a - b))}
        if np.ptp(a) and np.ptp(b):
            want["pearson"] = sps.pearsonr(a, b)[0]
            want["spearman"] = sps.spearmanr(a, b)[0]
        if integer:
            want["agreement"] = np.mean(a == b)
            want["cohen_kappa"] = cohen_kappa_score(a, b)
        for j, m in enumerate(names):
            if m in want and np.isfinite(want[m]):
                assert got[r, j] == pytest.approx(want[m], abs=1e-12), m
            else:
                assert np.isnan(got[r, j]), m


def test_interval_is_the_percentile_of_the_engine_resamples() -> None:
    y, yhat = _pairs(5, 40, True)
    opts = ci_options(0.9, num_bootstrap=300, seed=7)
    assert opts is not None
    got = agreement_intervals(y, yhat, opts)
    tally = agreement_tally(y, yhat)
    counts = np.concatenate(list(resample_counts(np.ones(40, np.int64), 300, 7)))
    reps = tally.values(counts.astype(float))
    want = percentile(reps, 0.9)
    for j, (_, m) in enumerate(tally.keys):
        assert got[m] == pytest.approx(want[:, j].tolist(), abs=1e-12)
        point = tally.estimate()[j]
        assert got[m][0] <= point <= got[m][1]


def test_clusters_are_drawn_whole_and_recorded() -> None:
    y, yhat = _pairs(3, 40, False)
    codes = np.arange(40) // 8  # 5 clusters of 8
    opts = ci_options(0.95, num_bootstrap=200, seed=1, cluster="doc")
    assert opts is not None
    rec = agreement_record(y, yhat, {"metric": "m"}, opts, codes)
    p = rec.parameters
    assert p["cluster"] == "doc" and p["num_bootstrap"] == 200 and p["n"] == 40
    assert set(p["measure_ci"]) == {"pearson", "spearman", "mae"}
    # five clusters: the clustered interval differs from the one that draws items alone
    plain = agreement_intervals(y, yhat, ci_options(0.95, num_bootstrap=200, seed=1))
    assert p["measure_ci"]["mae"] != plain["mae"]


def test_constant_judge_has_no_correlation_interval() -> None:
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    rec = agreement_record(y, np.full(5, 0.5), {}, ci_options(0.95, num_bootstrap=50))
    assert rec.value["pearson"] is None
    assert rec.parameters["measure_ci"]["pearson"] == [None, None]
    assert rec.parameters["measure_ci"]["mae"] == [0.5, 0.5]
