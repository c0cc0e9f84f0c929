"""Group fairness: hand-worked values for every metric and every "requires" case of the spec."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.fairness import (
    FairnessEvaluator,
    PrivilegedGroup,
    average_odds_difference,
    disparate_impact,
    equal_opportunity_difference,
    evaluate_fairness,
    statistical_parity_difference,
)

# Ten people. sex > 0 is privileged. Labels / predictions, positive label 1.
#            unprivileged (sex=0)          privileged (sex=1)
Y = np.array([1, 1, 0, 0, 0, 1, 1, 1, 0, 0])
YHAT = np.array([1, 0, 1, 0, 0, 1, 1, 0, 1, 1])
SEX = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
AGE = np.array([20, 30, 40, 50, 60, 25, 35, 45, 55, 65])


def test_hand_worked_values():
    priv = SEX > 0
    # P(yhat=1|u) = 2/5, P(yhat=1|p) = 4/5
    assert statistical_parity_difference(YHAT, priv) == pytest.approx(2 / 5 - 4 / 5)
    assert disparate_impact(YHAT, priv) == pytest.approx((2 / 5) / (4 / 5))
    # TPR_u = 1/2, TPR_p = 2/3; FPR_u = 1/3, FPR_p = 2/2
    assert average_odds_difference(Y, YHAT, priv) == pytest.approx(
        ((1 / 3 - 1) + (1 / 2 - 2 / 3)) / 2
    )
    assert equal_opportunity_difference(Y, YHAT, priv) == pytest.approx(1 / 2 - 2 / 3)


def test_threshold_and_invert():
    g = PrivilegedGroup("age", 40.0)
    assert g.privileged(AGE).tolist() == (AGE > 40).tolist()  # 40 itself is not privileged
    gi = PrivilegedGroup("age", 40.0, invert=True)
    assert gi.privileged(AGE).tolist() == (AGE <= 40).tolist()
    assert PrivilegedGroup.parse("age:40:invert") == gi
    assert PrivilegedGroup.parse("sex") == PrivilegedGroup("sex", 0.0, False)
    with pytest.raises(InvalidInputError):
        PrivilegedGroup.parse("age:forty")


def test_spd_and_di_require_both_groups():
    everyone_priv = np.ones(4, bool)
    with pytest.raises(UndefinedMetricError, match="unprivileged group to have elements"):
        statistical_parity_difference([1, 0, 1, 0], everyone_priv)
    with pytest.raises(UndefinedMetricError, match="privileged group to have elements"):
        disparate_impact([1, 0, 1, 0], ~everyone_priv)
    with pytest.raises(UndefinedMetricError, match="denominator 0"):
        disparate_impact([1, 0, 0, 0], [False, False, True, True])


def test_aod_requires_all_four_label_groups():
    priv = np.array([False, False, True, True])
    with pytest.raises(UndefinedMetricError, match="positive labels in the unprivileged"):
        average_odds_difference([0, 0, 1, 0], [0, 1, 1, 0], priv)
    with pytest.raises(UndefinedMetricError, match="negative labels in the privileged"):
        average_odds_difference([1, 0, 1, 1], [0, 1, 1, 0], priv)


def test_eod_worst_value_when_labels_missing():
    assert (
        equal_opportunity_difference([0, 0, 1, 1], [1, 1, 1, 1], [False, False, True, True]) == 1.0
    )
    assert (
        equal_opportunity_difference([1, 1, 0, 0], [1, 1, 1, 1], [False, False, True, True]) == 1.0
    )


def test_evaluator_per_definition_and_average():
    df = pd.DataFrame({"y": Y, "yhat": YHAT, "sex": SEX, "age": AGE})
    ms = evaluate_fairness(df, label="y", prediction="yhat", groups=["sex", "age:40:invert"])
    spd_sex = ms.get("StatisticalParityDifference", group_column="sex").value
    young = AGE <= 40  # privileged under the inverted definition
    spd_age = YHAT[~young].mean() - YHAT[young].mean()
    age = ms.get("StatisticalParityDifference", group_column="age")
    assert age.value == pytest.approx(spd_age)
    assert age.parameters["privileged"] == "age <= 40"
    avg = ms.get("StatisticalParityDifference", average_over=["sex:0", "age:40:invert"])
    assert avg.value == pytest.approx((spd_sex + spd_age) / 2)
    counts = ms.filter("GroupCounts", group_column="sex")
    assert counts.get("GroupCounts", group="unprivileged").value == {
        "tp": 1,
        "fp": 1,
        "fn": 1,
        "tn": 2,
    }
    assert counts.get("GroupCounts", group="privileged").value == {
        "tp": 2,
        "fp": 2,
        "fn": 1,
        "tn": 0,
    }
    assert ms.get("Accuracy").value == pytest.approx(np.mean(Y == YHAT))
    assert ms.get("Precision").value == pytest.approx(3 / 6)
    assert ms.get("Recall").value == pytest.approx(3 / 5)


def test_average_is_undefined_when_a_definition_is():
    df = pd.DataFrame({"y": Y, "yhat": YHAT, "sex": SEX, "always": np.ones(10)})
    ms = evaluate_fairness(df, label="y", prediction="yhat", groups=["sex", "always"])
    per = ms.get("DisparateImpact", group_column="always")
    assert (
        per.value is None and "unprivileged group to have elements" in per.parameters["undefined"]
    )
    avg = ms.get("DisparateImpact", average_over=["sex:0", "always:0"])
    assert avg.value is None and "always:0" in avg.parameters["undefined"]
    eod = ms.get("EqualOpportunityDifference", group_column="always")
    assert eod.value == 1.0 and "worst_value" in eod.parameters


def test_string_labels_and_positive_label():
    ms = evaluate_fairness(
        pd.DataFrame({"y": ["H", "L", "H", "L"], "yhat": ["H", "H", "L", "L"], "g": [1, 1, 0, 0]}),
        label="y",
        prediction="yhat",
        groups=["g"],
        positive_label="H",
    )
    assert ms.get("StatisticalParityDifference", group_column="g").value == -1.0


def test_bad_input_names_row_and_field():
    df = pd.DataFrame({"y": [1, 0], "yhat": [1, 0], "sex": [1.0, np.nan]})
    with pytest.raises(InvalidInputError, match="row 2: field 'sex': a group value must be"):
        evaluate_fairness(df, label="y", prediction="yhat", groups=["sex"])
    with pytest.raises(InvalidInputError, match="field 'race': missing column"):
        evaluate_fairness(df, label="y", prediction="yhat", groups=["race"])
    df2 = pd.DataFrame({"y": [1, None], "yhat": [1, 0], "sex": [1, 0]})
    with pytest.raises(InvalidInputError, match="row 2: field 'y': missing value"):
        evaluate_fairness(df2, label="y", prediction="yhat", groups=["sex"])


def test_bad_batch_leaves_evaluator_unchanged():
    ev = FairnessEvaluator(["sex"]).add_arrays(Y, YHAT, {"sex": SEX})
    before = ev.compute().to_json()
    with pytest.raises(InvalidInputError):
        ev.add_arrays([1], [1], {"sex": ["x"]})
    assert ev.compute().to_json() == before


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(-2, 2)), min_size=1, max_size=40),
    st.integers(0, 40),
)
def test_batches_add_up(rows, cut):
    y, yhat, s = (np.array(c) for c in zip(*rows))
    whole = (
        FairnessEvaluator(["s", "s:1:invert"], positive_label=True)
        .add_arrays(y, yhat, {"s": s})
        .compute()
    )
    a = FairnessEvaluator(["s", "s:1:invert"], positive_label=True)
    b = FairnessEvaluator(["s", "s:1:invert"], positive_label=True)
    if cut > 0:
        a.add_arrays(y[:cut], yhat[:cut], {"s": s[:cut]})
    if cut < len(y):
        b.add_arrays(y[cut:], yhat[cut:], {"s": s[cut:]})
    assert a.merge(b).compute().to_json() == whole.to_json()
    # Bounds: SPD, AOD, EOD in [-1, 1]; DI >= 0.
    for m in whole:
        if m.value is None or m.type in ("GroupCounts",):
            continue
        if m.type == "DisparateImpact":
            assert m.value >= 0
        elif m.type in (
            "StatisticalParityDifference",
            "AverageOddsDifference",
            "EqualOpportunityDifference",
        ):
            assert -1 <= m.value <= 1
