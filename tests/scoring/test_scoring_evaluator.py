"""The evaluator: tables equal the functional API, batches merge exactly, bad input."""

import math

import numpy as np
import pandas as pd
import pytest

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.scoring import (
    ScoringEvaluator,
    adjacent_agreement,
    cohen_kappa,
    exact_agreement,
    fairness_analyses,
    mse_true,
    pearson_r,
    prmse_true,
    quadratic_weighted_kappa,
    r2,
    rater_error_variance,
    scoring_tables,
    standardized_mean_difference,
    true_score_variance,
)


def _frame(seed=0, n=800):
    rng = np.random.default_rng(seed)
    t = rng.normal(3, 1, n)
    h = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    h2 = np.clip(np.rint(t + rng.normal(0, 0.6, n)), 1, 6)
    h2[rng.random(n) > 0.25] = np.nan
    m = t + rng.normal(0, 0.5, n)
    return pd.DataFrame(
        {
            "h": h,
            "h2": h2,
            "m": m,
            "g": rng.choice(list("abc"), n),
            "L1": rng.choice(["en", "es"], n),
        }
    )


def test_tables_equal_functional_api():
    df = _frame()
    res = scoring_tables(df, human="h", system="m", human2="h2", group_columns=["g", "L1"])
    h, m, h2 = df["h"].to_numpy(), df["m"].to_numpy(), df["h2"].to_numpy()
    for row, y in (("m", m), ("m_round", np.rint(m))):
        r = res["eval"].loc[row]
        assert r["wtkappa"] == pytest.approx(quadratic_weighted_kappa(h, y), abs=1e-12)
        assert r["kappa"] == pytest.approx(cohen_kappa(h, y), abs=1e-12)
        assert r["corr"] == pytest.approx(pearson_r(h, y), abs=1e-12)
        assert r["R2"] == pytest.approx(r2(h, y), abs=1e-12)
        assert r["exact_agr"] == exact_agreement(h, y)
        assert r["adj_agr"] == adjacent_agreement(h, y)
        assert r["SMD"] == pytest.approx(standardized_mean_difference(h, y), abs=1e-12)
        ratings = np.column_stack([h, h2])
        tr = res["true_score_eval"].loc[row]
        assert tr["PRMSE true"] == pytest.approx(prmse_true(y, ratings), abs=1e-12)
        assert tr["MSE true"] == pytest.approx(mse_true(y, ratings), abs=1e-12)
        assert tr["True score var"] == pytest.approx(true_score_variance(ratings), rel=1e-12)
        assert tr["Variance of errors"] == pytest.approx(rater_error_variance(ratings), rel=1e-12)
        assert tr["N multiple"] == (~np.isnan(h2)).sum()
        assert tr["N single"] == np.isnan(h2).sum()
    short = res["eval_short"].iloc[0]
    assert list(res["eval_short"].columns[:5]) == ["N", "h_mean", "h_sd", "sys_mean.m", "sys_sd.m"]
    assert short["kappa.m_round"] == res["eval"].loc["m_round", "kappa"]
    t = fairness_analyses(h, m, df["g"].to_numpy())
    pd.testing.assert_frame_equal(res["fairness_metrics_by_g"], t)
    assert set(res.tables) == {
        "eval",
        "eval_short",
        "consistency",
        "true_score_eval",
        "eval_by_g",
        "eval_by_L1",
        "consistency_by_g",
        "consistency_by_L1",
        "fairness_metrics_by_g",
        "fairness_metrics_by_L1",
        "degradation",
        "disattenuated_correlations",
        "disattenuated_correlations_by_g",
        "disattenuated_correlations_by_L1",
    }
    deg = res["degradation"]
    assert deg.loc["m", "corr"] == pytest.approx(
        res["eval"].loc["m", "corr"] - res["consistency"].loc["", "corr"], abs=1e-15
    )
    dis = res["disattenuated_correlations"].loc["m"]
    assert dis["corr_disattenuated"] == pytest.approx(
        res["eval"].loc["m", "corr"] / np.sqrt(res["consistency"].loc["", "corr"]), abs=1e-15
    )


def test_rsmtool_column_names():
    res = scoring_tables(_frame(), human="h", system="m", human2="h2", group_columns=["g"])
    assert list(res["eval"].columns) == [
        "N",
        "h_mean",
        "h_sd",
        "h_min",
        "h_max",
        "sys_mean",
        "sys_sd",
        "sys_min",
        "sys_max",
        "corr",
        "wtkappa",
        "R2",
        "kappa",
        "exact_agr",
        "adj_agr",
        "SMD",
        "RMSE",
        "MSE",
    ]
    assert list(res["consistency"].columns) == [
        "N",
        "h1_mean",
        "h1_sd",
        "h1_min",
        "h1_max",
        "h2_mean",
        "h2_sd",
        "h2_min",
        "h2_max",
        "corr",
        "wtkappa",
        "kappa",
        "exact_agr",
        "adj_agr",
        "SMD",
    ]
    assert list(res["true_score_eval"].columns) == [
        "N",
        "N raters",
        "N single",
        "N multiple",
        "Variance of errors",
        "True score var",
        "MSE true",
        "PRMSE true",
    ]
    assert list(res["eval_by_g"].index) == ["All data", "a", "b", "c"]
    assert "DSM.m" in res["eval_by_g"].columns and "DSM.m_round" in res["eval_by_g"].columns
    assert list(res["fairness_metrics_by_g"].index) == ["R2", "sig"]
    assert list(res["fairness_metrics_by_g"].columns) == [
        "Overall score accuracy",
        "Overall score difference",
        "Conditional score difference",
        "base_category",
    ]


def _assert_results_close(a, b):
    assert set(a.tables) == set(b.tables)
    for name in a.tables:
        ta, tb = a.tables[name], b.tables[name]
        assert list(ta.index) == list(tb.index) and list(ta.columns) == list(tb.columns), name
        num = ta.select_dtypes("number").columns
        np.testing.assert_allclose(
            ta[num].to_numpy(float), tb[num].to_numpy(float), rtol=1e-9, atol=1e-10, err_msg=name
        )


def test_batches_and_merge_equal_one_batch():
    df = _frame(1, 900)
    one = scoring_tables(df, human="h", system="m", human2="h2", group_columns=["g"])
    ev = ScoringEvaluator(human="h", system="m", human2="h2", group_columns=["g"])
    for part in np.array_split(np.arange(len(df)), 4):
        ev.add(df.iloc[part])
    _assert_results_close(ev.tables(), one)
    a = ScoringEvaluator(human="h", system="m", human2="h2", group_columns=["g"])
    b = ScoringEvaluator(human="h", system="m", human2="h2", group_columns=["g"])
    # second half shifted: different shift, score range and group order in each evaluator
    a.add(df.iloc[:300])
    b.add(df.iloc[300:].sort_values("g", ascending=False))
    _assert_results_close(a.merge(b).tables(), one)


def test_non_numeric_dropped_and_counted():
    df = _frame(2, 300).astype({"h": object, "m": object, "h2": object})
    df.loc[0, "h"] = "n/a"
    df.loc[1, "m"] = "?"
    df.loc[2, "h"] = 0
    df.loc[3, "h2"] = "x"
    df.loc[4, "h2"] = 0
    res = scoring_tables(df, human="h", system="m", human2="h2")
    assert res.dropped == {
        "human_non_numeric": 1,
        "system_non_numeric": 1,
        "human_zero": 1,
        "h2_non_numeric": 1,
        "h2_zero": 1,
    }
    assert res["eval"].loc["m", "N"] == 297
    assert res.metrics.get("NDropped", reason="human_zero").value == 1
    kept = scoring_tables(df, human="h", system="m", exclude_zero_scores=False)
    assert kept["eval"].loc["m", "N"] == 298


def test_all_nan_column_and_missing_column_are_clear_errors():
    df = pd.DataFrame({"h": [1, 2], "m": [np.nan, "x"]})
    with pytest.raises(InvalidInputError, match="field 'm'.*no numeric values"):
        scoring_tables(df, human="h", system="m")
    with pytest.raises(InvalidInputError, match="field 'q'"):
        scoring_tables(df, human="h", system="q")
    with pytest.raises(InvalidInputError, match="no response"):
        scoring_tables(pd.DataFrame({"h": [0, 0], "m": [1, 2]}), human="h", system="m")


def test_functional_mismatched_lengths_and_nan():
    with pytest.raises(InvalidInputError, match="lengths differ"):
        quadratic_weighted_kappa([1, 2, 3], [1, 2])
    with pytest.raises(InvalidInputError, match="human: index 1"):
        pearson_r([1, float("nan"), 3], [1, 2, 3])
    with pytest.raises(UndefinedMetricError):
        quadratic_weighted_kappa([], [])


def test_one_member_subgroup_and_constant_scores():
    df = pd.DataFrame(
        {"h": [1, 2, 3, 4, 2, 3], "m": [1.0, 2, 3, 3, 2, 2], "g": ["a", "a", "a", "b", "b", "solo"]}
    )
    df.loc[5, "m"] = 2.5
    res = scoring_tables(df, human="h", system="m", group_columns=["g"])
    row = res["eval_by_g"].loc["solo"]
    assert (
        row["N"] == 1
        and math.isnan(row["h_sd"])
        and math.isnan(row["corr.m"])
        and math.isnan(row["R2.m"])
    )
    u = res.undefined
    reasons = u[(u.table == "eval_by_g") & (u.row == "solo")].set_index("column")["reason"]
    assert reasons["corr"] == "requires N >= 2 responses"
    rec = [m for m in res.metrics.filter("PearsonR", group="solo")]
    assert rec and rec[0].value is None and "N >= 2" in rec[0].parameters["undefined"]
    # constant system scores: r undefined with the reason; QWK defined (0)
    const = scoring_tables(
        pd.DataFrame({"h": [1, 2, 3], "m": [2.0, 2.0, 2.0]}), human="h", system="m"
    )
    assert math.isnan(const["eval"].loc["m", "corr"])
    assert (
        const.metrics.filter("PearsonR", score="m")[0]
        .parameters["undefined"]
        .startswith("requires non-constant system")
    )
    assert const["eval"].loc["m", "wtkappa"] == 0.0
    with pytest.raises(UndefinedMetricError, match="non-constant system"):
        pearson_r([1, 2, 3], [2, 2, 2])


def test_n1_and_no_double_scored():
    res = scoring_tables(
        pd.DataFrame({"h": [3], "m": [2.5], "h2": [np.nan]}), human="h", system="m", human2="h2"
    )
    assert math.isnan(res["eval"].loc["m", "R2"])
    assert (
        res.metrics.filter("R2", score="m")[0].parameters["undefined"]
        == "requires N >= 2 responses"
    )
    assert res["consistency"].loc["", "N"] == 0
    assert "PRMSE" in {m.type for m in res.metrics if m.value is None}
    with pytest.raises(UndefinedMetricError, match="N >= 2"):
        r2([3], [2.5])


def test_given_rater_error_variance_without_second_rater():
    df = _frame(4, 200)[["h", "m"]]
    res = scoring_tables(df, human="h", system="m", rater_error_variance=0.3)
    assert res["true_score_eval"].loc["m", "PRMSE true"] == pytest.approx(
        prmse_true(df["m"], df["h"], rater_error_variance=0.3), abs=1e-12
    )


def test_missing_subgroup_value_is_no_info():
    df = pd.DataFrame({"h": [1, 2, 3, 4], "m": [1, 2, 3, 3.5], "g": ["a", None, "a", "b"]})
    res = scoring_tables(df, human="h", system="m", group_columns=["g"])
    assert "No info" in res["eval_by_g"].index


def test_polars_and_parquet_inputs(tmp_path):
    import polars as pl

    df = _frame(5, 100)
    a = scoring_tables(df, human="h", system="m", group_columns=["g"])
    b = scoring_tables(pl.from_pandas(df), human="h", system="m", group_columns=["g"])
    df.to_parquet(tmp_path / "d.parquet")
    c = scoring_tables(tmp_path / "d.parquet", human="h", system="m", group_columns=["g"])
    _assert_results_close(a, b)
    _assert_results_close(a, c)


@pytest.mark.parametrize("half_points", [False, True])
def test_fast_cell_path_equals_direct_path(half_points):
    df = _frame(8, 700)
    if half_points:
        df["h"] = np.where(df.index % 3 == 0, df["h"] + 0.5, df["h"])
    results = []
    for fast in (True, False):
        ev = ScoringEvaluator(human="h", system="m", human2="h2", group_columns=["g", "L1"])
        ev.fast = fast
        ev.add(df)
        results.append(ev.tables())
    _assert_results_close(*results)


def test_continuous_human_scores_use_direct_path():
    from assay.scoring.level_stats import MAX_LEVELS, level_code

    rng = np.random.default_rng(9)
    h = rng.normal(3, 1, MAX_LEVELS + 10)
    assert level_code(h) is None
    df = pd.DataFrame(
        {"h": h, "m": h + rng.normal(0, 0.3, h.size), "g": rng.choice(["a", "b"], h.size)}
    )
    res = scoring_tables(df, human="h", system="m", group_columns=["g"])
    assert res["eval"].loc["m", "corr"] == pytest.approx(pearson_r(df["h"], df["m"]), abs=1e-12)
    assert res["eval"].loc["m", "kappa"] == pytest.approx(cohen_kappa(df["h"], df["m"]), abs=1e-12)


def test_more_raters_feed_prmse_and_first_extra_rater_feeds_consistency():
    df = _frame(10, 400)
    rng = np.random.default_rng(10)
    h3 = np.clip(np.rint(df["h"] + rng.normal(0, 0.7, len(df))), 1, 6)
    df["h3"] = np.where(rng.random(len(df)) < 0.3, h3, np.nan)
    res = scoring_tables(df, human="h", system="m", human2=["h2", "h3"])
    ratings = df[["h", "h2", "h3"]].to_numpy(float)
    tr = res["true_score_eval"].loc["m"]
    assert tr["PRMSE true"] == pytest.approx(prmse_true(df["m"], ratings), abs=1e-12)
    assert tr["N raters"] == 3
    d = df["h2"].notna()
    assert res["consistency"].loc["", "N"] == d.sum()
    assert res["consistency"].loc["", "corr"] == pytest.approx(
        pearson_r(df["h"][d], df["h2"][d]), abs=1e-12
    )


def test_merge_rejects_different_configuration():
    a = ScoringEvaluator(human="h", system="m")
    b = ScoringEvaluator(human="h", system="other")
    with pytest.raises(InvalidInputError, match="configured differently"):
        a.merge(b)
    with pytest.raises(InvalidInputError, match="no data"):
        a.compute()
