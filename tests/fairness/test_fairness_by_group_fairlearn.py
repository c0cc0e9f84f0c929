"""Differential test: per-group metrics and the group aggregates against fairlearn.

fairlearn's per-group rates are 0.0 where a group has no positive (TPR) or no negative
(FPR) labels; assay's are undefined there unless ``zero_division`` is set, so assay runs
with ``zero_division=0`` to be compared number for number, and with the default to check
that exactly those entries (and the aggregates over them) are ``None``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    demographic_parity_ratio,
    equalized_odds_difference,
    equalized_odds_ratio,
    false_positive_rate,
    selection_rate,
    true_positive_rate,
)
from fairlearnkit import RATES as FAIRLEARN_RATES
from fairlearnkit import TOL

from assay.fairness import FairnessEvaluator

METHODS = ("between_groups", "to_overall")


def _awkward(rng: np.random.Generator, k: int, shape: str):
    """Labels, predictions and a group per row, with the awkward case ``shape``."""
    n = int(rng.integers(20, 200))
    g = rng.integers(0, k, n)
    g[:k] = np.arange(k)  # every group occurs
    y = (rng.random(n) < 0.45).astype(int)
    yhat = np.where(rng.random(n) < 0.7, y, 1 - y)
    if shape == "no positives" and k > 1:
        y[g == 1] = 0
    if shape == "no negatives" and k > 1:
        y[g == 0] = 1
    if shape == "one row" and k > 1:
        g = np.where(g == k - 1, 0, g)
        g[0] = k - 1  # group k-1 is a single row
    if shape == "never predicted":
        yhat[:] = 0
    if shape == "all positive predictions":
        yhat[:] = 1
    names = np.array([f"g{i}" for i in range(k)])[g]
    return y, yhat, names


SHAPES = ("plain", "no positives", "no negatives", "one row", "never predicted",
          "all positive predictions")  # fmt: skip
SETTINGS = [(k, shape, seed) for k in (1, 2, 3, 6) for shape in SHAPES for seed in range(2)]


def _records(ms, column="L1"):
    out = {}
    for m in ms.to_list():
        p = m["parameters"]
        if p.get("group_column") == column and "privileged" not in p:
            out[(m["type"], p.get("group", p.get("method")))] = m
    return out


def _same(a: float | None, b: float) -> bool:
    return a is not None and abs(a - b) <= TOL


def _compare(rec, expected_values, method):
    """Assay's aggregates equal fairlearn's (NaN there: null with a reason here)."""
    for name, expected in expected_values.items():
        got = rec[(name, method)]
        if math.isnan(expected):
            assert got["value"] is None and got["parameters"]["undefined"], (name, got)
        else:
            assert _same(got["value"], expected), (name, method, got, expected)
    return len(expected_values)


@pytest.mark.parametrize(("k", "shape", "seed"), SETTINGS)
def test_by_group_and_aggregates_match_fairlearn(k, shape, seed):
    rng = np.random.default_rng(1000 * k + seed + 17 * SHAPES.index(shape))
    y, yhat, groups = _awkward(rng, k, shape)
    compared = 0
    frame = MetricFrame(metrics=FAIRLEARN_RATES, y_true=y, y_pred=yhat, sensitive_features=groups)
    eo = MetricFrame(
        metrics={"tpr": true_positive_rate, "fpr": false_positive_rate},
        y_true=y,
        y_pred=yhat,
        sensitive_features=groups,
    )
    for method in METHODS:
        ms = FairnessEvaluator(group_columns=["L1"], zero_division=0, method=method)
        rec = _records(ms.add_arrays(y, yhat, {"L1": groups}).compute())
        if method == "between_groups":
            for group, row in frame.by_group.iterrows():
                for rate in FAIRLEARN_RATES:
                    assert _same(rec[(rate, group)]["value"], row[rate]), (rate, group)
                    compared += 1
        fl = {
            "DemographicParityDifference": demographic_parity_difference(
                y, yhat, sensitive_features=groups, method=method
            ),
            "DemographicParityRatio": demographic_parity_ratio(
                y, yhat, sensitive_features=groups, method=method
            ),
            "EqualizedOddsDifference": equalized_odds_difference(
                y, yhat, sensitive_features=groups, method=method
            ),
        }
        # fairlearn's equalized_odds_ratio is min() over (TPR ratio, FPR ratio) with Python's
        # min, whose result with a NaN depends on the order; assay's is undefined then.
        parts = eo.ratio(method=method)
        fl["EqualizedOddsRatio"] = (
            math.nan
            if parts.isna().any()
            else equalized_odds_ratio(y, yhat, sensitive_features=groups, method=method)
        )
        compared += _compare(rec, fl, method)
        # agg="mean": the mean of the TPR and FPR parts (fairlearn's mean skips a NaN part)
        ms = FairnessEvaluator(group_columns=["L1"], zero_division=0, method=method, agg="mean")
        rec = _records(ms.add_arrays(y, yhat, {"L1": groups}).compute())
        mean = {
            "EqualizedOddsDifference": equalized_odds_difference(
                y, yhat, sensitive_features=groups, method=method, agg="mean"
            ),
            "EqualizedOddsRatio": math.nan
            if parts.isna().any()
            else equalized_odds_ratio(
                y, yhat, sensitive_features=groups, method=method, agg="mean"
            ),
        }
        compared += _compare(rec, mean, method)
    assert compared >= 4 * k + 12


@pytest.mark.parametrize(("k", "shape", "seed"), SETTINGS)
def test_undefined_exactly_where_a_denominator_is_zero(k, shape, seed):
    rng = np.random.default_rng(1000 * k + seed + 17 * SHAPES.index(shape))
    y, yhat, groups = _awkward(rng, k, shape)
    ev = FairnessEvaluator(group_columns=["L1"]).add_arrays(y, yhat, {"L1": groups})
    rec = _records(ev.compute())
    zero = _records(
        FairnessEvaluator(group_columns=["L1"], zero_division=0)
        .add_arrays(y, yhat, {"L1": groups})
        .compute()
    )
    checked, any_undefined = 0, False
    for g in np.unique(groups):
        pos, neg = int((y[groups == g] == 1).sum()), int((y[groups == g] == 0).sum())
        for rate, den in (("TruePositiveRate", pos), ("FalsePositiveRate", neg)):
            undefined = rec[(rate, g)]["value"] is None
            assert undefined == (den == 0), (rate, g)
            any_undefined |= undefined
            if undefined:
                assert zero[(rate, g)]["value"] == 0.0  # fairlearn's number
            checked += 1
    eod = rec[("EqualizedOddsDifference", "between_groups")]
    assert (eod["value"] is None) == any_undefined, eod
    if any_undefined:
        assert "has no" in eod["parameters"]["undefined"]
    else:
        assert eod["value"] == zero[("EqualizedOddsDifference", "between_groups")]["value"]
    assert checked == 2 * k


def test_numeric_group_column_matches_fairlearn():
    rng = np.random.default_rng(7)
    n = 500
    grade = rng.integers(1, 5, n)
    y = (rng.random(n) < 0.3 + 0.1 * grade).astype(int)
    yhat = (rng.random(n) < 0.2 + 0.15 * grade).astype(int)
    ms = FairnessEvaluator(group_columns=["grade"]).add_arrays(y, yhat, {"grade": grade}).compute()
    by = MetricFrame(
        metrics=selection_rate, y_true=y, y_pred=yhat, sensitive_features=grade
    ).by_group
    compared = 0
    for value, rate in by.items():
        got = ms.get("SelectionRate", group_column="grade", group=str(value)).value
        assert abs(got - rate) < TOL
        compared += 1
    dpd = ms.get("DemographicParityDifference", group_column="grade").value
    assert abs(dpd - demographic_parity_difference(y, yhat, sensitive_features=grade)) < TOL
    assert compared == 4


@pytest.mark.parametrize("seed", range(3))
def test_categorical_privileged_values_match_fairlearn(seed):
    rng = np.random.default_rng(seed)
    n = 1000
    lang = rng.choice(["en", "fr", "es", "de", "zh"], n)
    y = (rng.random(n) < 0.4 + 0.1 * (lang == "en")).astype(int)
    yhat = (rng.random(n) < 0.3 + 0.2 * y + 0.1 * (lang == "fr")).astype(int)
    ms = FairnessEvaluator(["L1=en,fr"]).add_arrays(y, yhat, {"L1": lang}).compute()
    side = np.where(np.isin(lang, ["en", "fr"]), "priv", "unpriv")
    by = MetricFrame(
        metrics={"sr": selection_rate, "tpr": true_positive_rate, "fpr": false_positive_rate},
        y_true=y,
        y_pred=yhat,
        sensitive_features=side,
    ).by_group
    u, p = by.loc["unpriv"], by.loc["priv"]
    expected = {
        "StatisticalParityDifference": u.sr - p.sr,
        "DisparateImpact": u.sr / p.sr,
        "AverageOddsDifference": ((u.fpr - p.fpr) + (u.tpr - p.tpr)) / 2,
        "EqualOpportunityDifference": u.tpr - p.tpr,
    }
    for name, value in expected.items():
        got = ms.get(name, group_column="L1")
        assert abs(got.value - value) < TOL, name
        assert got.parameters["privileged_values"] == ["en", "fr"]
    assert len(expected) == 4
