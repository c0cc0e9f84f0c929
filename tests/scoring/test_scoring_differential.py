"""Differential tests: assay.scoring vs scikit-learn, scipy and statsmodels on generated data."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy.stats import pearsonr
from sklearn.metrics import cohen_kappa_score, mean_squared_error, r2_score
from statsmodels.stats.anova import anova_lm

from assay.scoring import (
    cohen_kappa,
    fairness_analyses,
    fairness_analyses_ols,
    pearson_r,
    quadratic_weighted_kappa,
    scoring_tables,
)
from assay.scoring import (
    mean_squared_error as a_mse,
)
from assay.scoring import (
    r2 as a_r2,
)

SEEDS = range(12)


def _scores(seed: int, n: int = 400, lo: int = 1, hi: int = 6):
    rng = np.random.default_rng(seed)
    t = rng.normal((lo + hi) / 2, 1.2, n)
    h = np.clip(np.rint(t + rng.normal(0, 0.6, n)), lo, hi)
    m = t + rng.normal(0, 0.5, n)
    return h, m, rng


@pytest.mark.parametrize("seed", SEEDS)
def test_kappas_vs_sklearn_on_integer_labels(seed):
    h, m, _ = _scores(seed, lo=-2 + seed % 3, hi=4 + seed % 3)
    mi = np.rint(m)
    labels = np.arange(min(h.min(), mi.min()), max(h.max(), mi.max()) + 1)
    compared = 0
    for w in (None, "linear", "quadratic"):
        ours = cohen_kappa(h, mi, weights=w)
        theirs = cohen_kappa_score(h, mi, weights=w, labels=labels)
        assert ours == pytest.approx(theirs, abs=1e-12), w
        compared += 1
    assert compared == 3
    # QWK by the covariance formula equals sklearn's quadratic kappa on integer scores
    assert quadratic_weighted_kappa(h, mi) == pytest.approx(
        cohen_kappa_score(h, mi, weights="quadratic", labels=labels), abs=1e-12
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_continuous_metrics_vs_sklearn_scipy(seed):
    h, m, _ = _scores(seed)
    assert a_mse(h, m) == pytest.approx(mean_squared_error(h, m), rel=1e-13)
    assert a_r2(h, m) == pytest.approx(r2_score(h, m), rel=1e-12, abs=1e-14)
    assert pearson_r(h, m) == pytest.approx(pearsonr(h, m)[0], abs=1e-13)
    assert h.size > 0


def test_r2_constant_human_deliberately_differs_from_sklearn():
    from assay.errors import UndefinedMetricError

    h = [3.0, 3.0, 3.0]
    m = [2.0, 3.0, 4.0]
    assert r2_score(h, m) == 0.0  # sklearn's force_finite convention
    with pytest.raises(UndefinedMetricError, match="non-constant human"):
        a_r2(h, m)


@pytest.mark.parametrize("seed", SEEDS)
def test_evaluator_tables_vs_peers(seed):
    h, m, rng = _scores(seed, n=600)
    h2 = np.clip(np.rint(h + rng.normal(0, 0.7, h.size)), 1, 6)
    h2[rng.random(h.size) > 0.3] = np.nan
    g = rng.choice(["x", "y", "z"], h.size, p=[0.5, 0.3, 0.2])
    df = pd.DataFrame({"h": h, "m": m, "h2": h2, "g": g})
    res = scoring_tables(df, human="h", system="m", human2="h2", group_columns=["g"])
    ev = res["eval"]
    mr = np.rint(m)
    labels = np.arange(min(h.min(), mr.min()), max(h.max(), mr.max()) + 1)
    compared = 0
    for row, y in (("m", m), ("m_round", mr)):
        compared += 7
        r = ev.loc[row]
        assert r["corr"] == pytest.approx(pearsonr(h, y)[0], abs=1e-12)
        assert r["R2"] == pytest.approx(r2_score(h, y), abs=1e-12)
        assert r["RMSE"] == pytest.approx(np.sqrt(mean_squared_error(h, y)), rel=1e-12)
        assert r["kappa"] == pytest.approx(cohen_kappa_score(h, mr, labels=labels), abs=1e-12)
        assert r["h_sd"] == pytest.approx(np.std(h, ddof=1), rel=1e-12)
        assert r["sys_sd"] == pytest.approx(np.std(y, ddof=1), rel=1e-12)
        assert r["SMD"] == pytest.approx((y.mean() - h.mean()) / np.std(h, ddof=1), abs=1e-12)
    assert ev.loc["m_round", "wtkappa"] == pytest.approx(
        cohen_kappa_score(h, mr, weights="quadratic", labels=labels), abs=1e-12
    )
    # human-human agreement on the double-scored responses
    d = ~np.isnan(h2)
    c = res["consistency"].iloc[0]
    assert c["N"] == d.sum()
    assert c["corr"] == pytest.approx(pearsonr(h[d], h2[d])[0], abs=1e-12)
    hl = np.arange(min(h[d].min(), h2[d].min()), max(h[d].max(), h2[d].max()) + 1)
    assert c["kappa"] == pytest.approx(cohen_kappa_score(h[d], h2[d], labels=hl), abs=1e-12)
    assert c["wtkappa"] == pytest.approx(
        cohen_kappa_score(h[d], h2[d], weights="quadratic", labels=hl), abs=1e-12
    )
    pooled = np.sqrt((np.var(h[d], ddof=1) + np.var(h2[d], ddof=1)) / 2)
    assert c["SMD"] == pytest.approx((h2[d].mean() - h[d].mean()) / pooled, abs=1e-12)
    # per-group rows vs peers on the subset
    for lab in ("x", "y", "z"):
        compared += 3
        s = g == lab
        row = res["eval_by_g"].loc[lab]
        assert row["corr.m"] == pytest.approx(pearsonr(h[s], m[s])[0], abs=1e-12)
        assert row["R2.m"] == pytest.approx(r2_score(h[s], m[s]), abs=1e-12)
        assert row["RMSE.m"] == pytest.approx(np.sqrt(mean_squared_error(h[s], m[s])), rel=1e-12)
    assert compared == 23


def _statsmodels_fairness(h, m, g, base):
    """RSMTool's procedure written out with statsmodels formulas (independent of assay)."""
    df = pd.DataFrame({"sc1": h, "error": m - h, "grp": g})
    df["SE"] = df["error"] ** 2
    cats = [base] + sorted(set(g) - {base})
    df["group"] = pd.Categorical(df["grp"], categories=cats)
    df["sc1_cat"] = pd.Categorical(df["sc1"])
    osa = smf.ols("SE ~ group", data=df).fit()
    osd = smf.ols("error ~ group", data=df).fit()
    null = smf.ols("error ~ sc1_cat", data=df).fit()
    full = smf.ols("error ~ group + sc1_cat", data=df).fit()
    return {
        "osa": (osa.rsquared_adj, osa.f_pvalue),
        "osd": (osd.rsquared_adj, osd.f_pvalue),
        "csd": (full.rsquared_adj - null.rsquared_adj, anova_lm(null, full).values[1][-1]),
    }


@pytest.mark.parametrize("seed", range(8))
def test_fairness_vs_statsmodels_ols(seed):
    h, m, rng = _scores(seed, n=500)
    g = rng.choice(["a", "b", "c", "d"], h.size, p=[0.4, 0.3, 0.2, 0.1])
    m = m + 0.3 * (g == "c") * (seed % 2)  # a real subgroup effect in half the cases
    t = fairness_analyses(h, m, g)
    base = t["base_category"].iloc[0]
    assert base == pd.Series(g).value_counts().index[0]
    ref = _statsmodels_fairness(h, m, g, base)
    compared = 0
    for key, col in (
        ("osa", "Overall score accuracy"),
        ("osd", "Overall score difference"),
        ("csd", "Conditional score difference"),
    ):
        assert t.loc["R2", col] == pytest.approx(ref[key][0], abs=1e-10)
        assert t.loc["sig", col] == pytest.approx(ref[key][1], rel=1e-7, abs=1e-12)
        compared += 2
    assert compared == 6
    # and the row-level statsmodels path inside assay agrees too
    t2 = fairness_analyses_ols(h, m, g)
    assert t2.drop(columns="base_category").size == 6
    np.testing.assert_allclose(
        t.drop(columns="base_category").to_numpy(float),
        t2.drop(columns="base_category").to_numpy(float),
        rtol=1e-7,
        atol=1e-10,
    )


def test_fairness_continuous_human_scores_vs_statsmodels():
    # averaged human scores (x.5 values) and a group that never receives one score level
    rng = np.random.default_rng(3)
    h = rng.integers(2, 12, 300) / 2.0
    g = rng.choice(["p", "q", "r"], 300)
    h[g == "r"] = np.where(h[g == "r"] == 5.5, 5.0, h[g == "r"])
    m = h + rng.normal(0, 0.5, 300) + 0.2 * (g == "q")
    t = fairness_analyses(h, m, g)
    ref = _statsmodels_fairness(h, m, g, t["base_category"].iloc[0])
    assert t.loc["R2", "Conditional score difference"] == pytest.approx(ref["csd"][0], abs=1e-10)
    assert t.loc["sig", "Conditional score difference"] == pytest.approx(ref["csd"][1], rel=1e-7)


def test_fairness_many_human_levels_vs_statsmodels():
    # 120 distinct human values: the null model of CSD has 120 level dummies
    rng = np.random.default_rng(11)
    h = rng.integers(0, 120, 800) / 10.0
    g = rng.choice(["p", "q", "r", "s"], h.size)
    m = h + rng.normal(0, 0.5, h.size) + 0.15 * (g == "s")
    t = fairness_analyses(h, m, g)
    ref = _statsmodels_fairness(h, m, g, t["base_category"].iloc[0])
    assert t.loc["R2", "Conditional score difference"] == pytest.approx(ref["csd"][0], abs=1e-10)
    assert t.loc["sig", "Conditional score difference"] == pytest.approx(ref["csd"][1], rel=1e-6)
