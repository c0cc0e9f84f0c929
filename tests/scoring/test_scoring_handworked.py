"""Hand-worked values for every formula of the scoring metrics (RSMTool's definitions).

The arithmetic is in the comments; the expected numbers are written as the fractions the
hand computation gives, not copied from assay's output.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.scoring import (
    adjacent_agreement,
    agreement,
    cohen_kappa,
    difference_of_standardized_means,
    exact_agreement,
    fairness_analyses,
    mean_squared_error,
    mse_true,
    pearson_r,
    prmse_true,
    quadratic_weighted_kappa,
    r2,
    rater_error_variance,
    root_mean_squared_error,
    scoring_tables,
    standardized_mean_difference,
    true_score_variance,
)

# H = 1..5, M = [1, 3, 3, 5, 4]
# mean H = 3, mean M = 16/5 = 3.2
# dH = -2,-1,0,1,2 ; dM = -2.2,-0.2,-0.2,1.8,0.8
# sum dH^2 = 10 ; sum dM^2 = 8.8 ; sum dH dM = 8.0 ; M - H = 0,1,0,1,-1
H = [1, 2, 3, 4, 5]
M = [1, 3, 3, 5, 4]


def test_agreement_exact_and_adjacent():
    assert exact_agreement(H, M) == 40.0  # positions 0 and 2 match
    assert adjacent_agreement(H, M) == 100.0  # every |M - H| <= 1
    assert agreement(H, M, tolerance=0.5) == 40.0
    assert agreement([1.0, 2.0], [1.5, 3.6], tolerance=1) == 50.0


def test_pearson_r():
    assert pearson_r(H, M) == pytest.approx(8.0 / math.sqrt(10 * 8.8), abs=1e-15)


def test_qwk_covariance_formula_ddof0():
    # 2 Cov / (VarH + VarM + (mean diff)^2) = 2*(8/5) / (10/5 + 8.8/5 + 0.2^2) = 3.2 / 3.8
    assert quadratic_weighted_kappa(H, M) == pytest.approx(3.2 / 3.8, abs=1e-15)


def test_qwk_continuous_scores():
    # H = [1,2,3], M = [1.5, 2, 2.5]: means 2, 2; Cov = (-1*-0.5 + 0 + 1*0.5)/3 = 1/3
    # VarH = 2/3, VarM = 0.5/3 -> QWK = (2/3) / (2/3 + 1/6) = 0.8
    assert quadratic_weighted_kappa([1, 2, 3], [1.5, 2, 2.5]) == pytest.approx(0.8, abs=1e-15)


def test_mse_rmse_r2():
    assert mean_squared_error(H, M) == pytest.approx(3 / 5)
    assert root_mean_squared_error(H, M) == pytest.approx(math.sqrt(3 / 5))
    assert r2(H, M) == pytest.approx(1 - 3 / 10)  # 1 - sum(H-M)^2 / sum(H - mean)^2


def test_smd_unpooled_and_pooled():
    sd_h = math.sqrt(10 / 4)
    sd_m = math.sqrt(8.8 / 4)
    assert standardized_mean_difference(H, M) == pytest.approx(0.2 / sd_h, abs=1e-15)
    assert standardized_mean_difference(H, M, method="pooled") == pytest.approx(
        0.2 / math.sqrt((sd_h**2 + sd_m**2) / 2), abs=1e-15
    )


def test_cohen_kappa_unweighted():
    # po = 2/5; hist H = [1,1,1,1,1], hist M = [1,0,2,1,1] -> pe = 5/25 = 0.2
    # kappa = 1 - (1 - 0.4) / (1 - 0.2) = 0.25
    assert cohen_kappa(H, M) == pytest.approx(0.25, abs=1e-15)


def test_cohen_kappa_negative_labels_are_shifted():
    # po = 2/3; hist H = [1,1,1], hist M = [1,0,2] -> pe = 3/9; kappa = 1 - (1/3)/(2/3) = 0.5
    assert cohen_kappa([-1, 0, 1], [-1, 1, 1]) == pytest.approx(0.5)
    assert cohen_kappa([-1, 0, 1], [-1, 1, 1], weights="quadratic") == pytest.approx(
        cohen_kappa([4, 5, 6], [4, 6, 6], weights="quadratic")
    )


def test_cohen_kappa_missing_category_is_filled_in():
    # H = [1,2,4,4], M = [1,2,4,2]: nobody used 3. With SKLL semantics the quadratic weights
    # are (value difference)^2, so weighted kappa equals the covariance QWK:
    # means 2.75, 2.25; sum dH dM = 4.25, sum dH^2 = 6.75, sum dM^2 = 4.75
    # QWK = 2*4.25/4 / (6.75/4 + 4.75/4 + 0.25) = 2.125 / 3.125 = 0.68
    h, m = [1, 2, 4, 4], [1, 2, 4, 2]
    assert cohen_kappa(h, m, weights="quadratic") == pytest.approx(0.68, abs=1e-15)
    from sklearn.metrics import cohen_kappa_score

    # scikit-learn without the full label list uses label indices (4 -> index 2): different
    assert cohen_kappa_score(h, m, weights="quadratic") != pytest.approx(0.68, abs=1e-3)
    assert cohen_kappa_score(h, m, weights="quadratic", labels=[1, 2, 3, 4]) == pytest.approx(
        0.68, abs=1e-12
    )


def test_cohen_kappa_rounds_half_to_even_and_single_category():
    # SKLL rounds with np.round: 2.5 -> 2, 3.5 -> 4. One category only: kappa = 1 (weights all 0)
    assert cohen_kappa([2.5, 2.0], [2.0, 2.4]) == 1.0
    assert cohen_kappa([3.5], [4.0]) == 1.0
    # [1.4, 2.6] -> [1, 3]; [1, 3] -> agree everywhere -> 1 (po = 1)
    assert cohen_kappa([1.4, 2.6], [1, 3]) == 1.0


def test_dsm():
    # whole set: mean H 3, sd H sqrt(2.5); mean M 3.2, sd M sqrt(2.2);
    # subgroup = first two responses
    # z_M - z_H averaged = (2 - 3.2)/sqrt(2.2) - (1.5 - 3)/sqrt(2.5)
    expected = (2 - 3.2) / math.sqrt(2.2) - (1.5 - 3) / math.sqrt(2.5)
    assert difference_of_standardized_means(
        H[:2], M[:2], 3.0, math.sqrt(2.5), 3.2, math.sqrt(2.2)
    ) == pytest.approx(expected, abs=1e-15)
    res = scoring_tables(
        pd.DataFrame({"h": H, "m": M, "g": ["a", "a", "b", "b", "b"]}),
        human="h",
        system="m",
        group_columns=["g"],
    )
    assert res["eval_by_g"].loc["a", "DSM.m"] == pytest.approx(expected, abs=1e-12)
    assert res["eval_by_g"].loc["All data", "DSM.m"] == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------- PRMSE

# unequal numbers of ratings:
#   r1 = [2, 3, 4]  c=3 mean 3  within SS 2
#   r2 = [4, 4]     c=2 mean 4  within SS 0
#   r3 = [1]        c=1 mean 1
#   r4 = [5, 3]     c=2 mean 4  within SS 2
# sigma_e^2 = (2 + 0 + 2) / (2 + 1 + 0 + 1) = 1
# c. = 8, sum c^2 = 18, grand mean of ratings = 26/8 = 3.25
# sum c_i (mean_i - 3.25)^2 = 3*0.0625 + 2*0.5625 + 5.0625 + 2*0.5625 = 7.5
# sigma_T^2 = (7.5 - 3*1) / (8 - 18/8) = 4.5 / 5.75
# M = [3, 3, 2, 5]: sum c_i (mean_i - M_i)^2 = 0 + 2 + 1 + 2 = 5; MSE(T|M) = (5 - 4*1)/8 = 0.125
NAN = float("nan")
RATINGS = [[2, 3, 4], [4, 4, NAN], [1, NAN, NAN], [5, 3, NAN]]
SYS = [3, 3, 2, 5]


def test_prmse_unequal_numbers_of_ratings():
    assert rater_error_variance(RATINGS) == pytest.approx(1.0)
    assert true_score_variance(RATINGS) == pytest.approx(4.5 / 5.75)
    assert mse_true(SYS, RATINGS) == pytest.approx(0.125)
    assert prmse_true(SYS, RATINGS) == pytest.approx(1 - 0.125 / (4.5 / 5.75))


def test_prmse_with_given_rater_error_variance():
    # sigma_e^2 = 0.5: sigma_T^2 = (7.5 - 1.5)/5.75; MSE = (5 - 2)/8 = 0.375
    assert prmse_true(SYS, RATINGS, rater_error_variance=0.5) == pytest.approx(
        1 - 0.375 / (6 / 5.75)
    )
    # one rating per response is enough when the variance is given
    single = [r[0] for r in RATINGS]
    # c_i = 1: sum (H - 3.0)^2 with H = [2,4,1,5], mean 3 -> 1+1+4+4 = 10;
    # sigma_T^2 = (10 - 3*0.5)/(4 - 1) = 8.5/3
    # MSE = ((2-3)^2 + (4-3)^2 + (1-2)^2 + 0 - 4*0.5)/4 = (3 - 2)/4 = 0.25
    assert prmse_true(SYS, single, rater_error_variance=0.5) == pytest.approx(1 - 0.25 / (8.5 / 3))


def test_prmse_double_scored_matches_closed_forms():
    rng = np.random.default_rng(7)
    t = rng.normal(3, 1, 300)
    h1 = np.rint(t + rng.normal(0, 0.7, 300))
    h2 = np.rint(t + rng.normal(0, 0.7, 300))
    m = t + rng.normal(0, 0.4, 300)
    hbar = (h1 + h2) / 2
    se2 = np.sum((h1 - h2) ** 2) / (2 * 300)  # 1/(2 N2) sum (H - H2)^2
    mse_closed = np.mean((hbar - m) ** 2) - se2 / 2
    var_closed = np.var(hbar, ddof=1) - se2 / 2
    ratings = np.column_stack([h1, h2])
    assert rater_error_variance(ratings) == pytest.approx(se2, rel=1e-12)
    assert mse_true(m, ratings) == pytest.approx(mse_closed, rel=1e-12)
    assert true_score_variance(ratings) == pytest.approx(var_closed, rel=1e-12)
    assert prmse_true(m, ratings) == pytest.approx(1 - mse_closed / var_closed, rel=1e-12)


def test_prmse_undefined_cases():
    with pytest.raises(UndefinedMetricError, match="two or more ratings"):
        prmse_true([1, 2], [1, 2])
    with pytest.raises(UndefinedMetricError, match="at least two responses"):
        true_score_variance([[1, 2]])
    with pytest.raises(InvalidInputError, match="no rating"):
        prmse_true([1, 2], [[1, 2], [NAN, NAN]])
    with pytest.raises(InvalidInputError, match="lengths differ"):
        prmse_true([1, 2, 3], [[1, 2], [2, 2]])


# ---------------------------------------------------------------- fairness (one-way ANOVA by hand)


def test_fairness_osa_osd_by_hand():
    # H = 3 everywhere; e = M - H: group a [0, 0, 1], group b [1, 1, 2]
    # OSD: SSB = 3(1/3 - 5/6)^2 + 3(4/3 - 5/6)^2 = 1.5, SSW = 2/3 + 2/3, SST = 17/6
    #      R2 = 9/17, adjusted = 1 - (8/17)(5/4) = 7/17, F = 1.5 / ((4/3)/4) = 4.5 on (1, 4)
    # OSA: SE a [0,0,1] b [1,1,4]: SSB = 25/6, SSW = 2/3 + 6, SST = 65/6 -> R2 = 5/13, adj = 3/13
    #      F = (25/6) / ((20/3)/4) = 2.5
    h = np.full(6, 3.0)
    m = h + np.array([0, 0, 1, 1, 1, 2.0])
    t = fairness_analyses(h, m, np.array(["a"] * 3 + ["b"] * 3))
    assert t.loc["R2", "Overall score difference"] == pytest.approx(7 / 17, abs=1e-12)
    assert t.loc["sig", "Overall score difference"] == pytest.approx(sps.f.sf(4.5, 1, 4), abs=1e-12)
    assert t.loc["R2", "Overall score accuracy"] == pytest.approx(3 / 13, abs=1e-12)
    assert t.loc["sig", "Overall score accuracy"] == pytest.approx(sps.f.sf(2.5, 1, 4), abs=1e-12)
    # constant human score: the null model of CSD is the intercept (adj R2 0), so CSD = OSD
    assert t.loc["R2", "Conditional score difference"] == pytest.approx(7 / 17, abs=1e-12)
    # equal group sizes: reference is the alphabetically first
    assert t["base_category"].iloc[0] == "a"


def test_fairness_reference_group_is_largest_or_given():
    h = np.array([1.0, 2, 3, 1, 2, 3, 2])
    m = h + np.array([0, 1, 0, 1, 1, 0, 0.5])
    g = np.array(["b", "b", "b", "a", "a", "c", "c"])
    assert fairness_analyses(h, m, g)["base_category"].iloc[0] == "b"
    assert fairness_analyses(h, m, g, base_group="c")["base_category"].iloc[0] == "c"


def test_fairness_constant_error_is_undefined_not_noise():
    # e = 0.1 everywhere: no variance to explain; one-pass sums leave ~1e-18 of rounding noise
    h = np.array([1.0, 2, 3, 4, 1, 2, 3, 4])
    t = fairness_analyses(h, h + 0.1, np.array(list("aabbaabb")))
    assert (
        t.loc[
            ["R2", "sig"],
            ["Overall score accuracy", "Overall score difference", "Conditional score difference"],
        ]
        .isna()
        .all()
        .all()
    )
    res = scoring_tables(
        pd.DataFrame({"h": h, "m": h + 0.1, "g": list("aabbaabb")}),
        human="h",
        system="m",
        group_columns=["g"],
    )
    rec = res.metrics.filter("OverallScoreDifference")[0]
    assert rec.value is None and rec.parameters["undefined"] == "requires non-constant errors"
