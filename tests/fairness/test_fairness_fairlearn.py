"""Differential test: assay's group-fairness metrics against fairlearn's per-group rates."""

import numpy as np
import pytest
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    demographic_parity_ratio,
    equal_opportunity_difference,
    false_positive_rate,
    selection_rate,
    true_positive_rate,
)

from assay.fairness import FairnessEvaluator

TOL = 1e-12


@pytest.mark.parametrize("seed", range(5))
def test_matches_fairlearn(seed):
    rng = np.random.default_rng(seed)
    n = 2000
    sens = rng.normal(size=n)
    y = (rng.random(n) < 0.4 + 0.1 * (sens > 0)).astype(int)
    yhat = (rng.random(n) < 0.3 + 0.2 * y + 0.1 * (sens > 0)).astype(int)
    ms = FairnessEvaluator(["s"]).add_arrays(y, yhat, {"s": sens}).compute()
    group = np.where(sens > 0, "priv", "unpriv")
    by = MetricFrame(
        metrics={"sr": selection_rate, "tpr": true_positive_rate, "fpr": false_positive_rate},
        y_true=y,
        y_pred=yhat,
        sensitive_features=group,
    ).by_group
    u, p = by.loc["unpriv"], by.loc["priv"]
    compared = []

    def get(t):
        compared.append(t)
        return ms.get(t, group_column="s").value

    assert abs(get("StatisticalParityDifference") - (u.sr - p.sr)) < TOL
    assert abs(get("DisparateImpact") - u.sr / p.sr) < TOL
    assert abs(get("AverageOddsDifference") - ((u.fpr - p.fpr) + (u.tpr - p.tpr)) / 2) < TOL
    assert abs(get("EqualOpportunityDifference") - (u.tpr - p.tpr)) < TOL
    # fairlearn's summaries are unsigned (max - min, min / max): assay's signed values map on them.
    assert (
        abs(
            abs(get("StatisticalParityDifference"))
            - demographic_parity_difference(y, yhat, sensitive_features=group)
        )
        < TOL
    )
    di = get("DisparateImpact")
    assert abs(min(di, 1 / di) - demographic_parity_ratio(y, yhat, sensitive_features=group)) < TOL
    assert (
        abs(
            abs(get("EqualOpportunityDifference"))
            - equal_opportunity_difference(y, yhat, sensitive_features=group)
        )
        < TOL
    )
    assert len(compared) == 7  # seven comparisons against fairlearn's numbers
