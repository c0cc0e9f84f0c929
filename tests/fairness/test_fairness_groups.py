"""Categorical privileged groups (``COLUMN=V1,V2``) and per-group metrics (``group_columns``):
hand-worked values, the functional API, bad input, and hypothesis properties (batches and
merges add up; the order of the rows does not matter)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.fairness import FairnessEvaluator, PrivilegedGroup, evaluate_fairness
from assay.fairness.by_group import (
    demographic_parity_difference,
    demographic_parity_ratio,
    equalized_odds_difference,
    equalized_odds_ratio,
)


def assert_same_metrics(a, b, rel=1e-12):
    """The two metric sets hold the same records, values within ``rel``; returns how many."""

    def key(d):
        return json.dumps({"type": d["type"], "parameters": d["parameters"]}, sort_keys=True)

    left, right = sorted(a.to_list(), key=key), sorted(b.to_list(), key=key)
    assert [key(d) for d in left] == [key(d) for d in right]
    for x, y in zip(left, right):
        if isinstance(x["value"], float) and isinstance(y["value"], float):
            assert math.isclose(x["value"], y["value"], rel_tol=rel, abs_tol=rel), (x, y)
        else:
            assert x["value"] == y["value"], (x, y)
    return len(left)


#                en en en fr fr es es es es de
Y = np.array([1, 0, 1, 1, 0, 0, 0, 1, 1, 0])
YHAT = np.array([1, 1, 0, 1, 0, 0, 1, 1, 0, 0])
L1 = np.array(["en", "en", "en", "fr", "fr", "es", "es", "es", "es", "de"])


def _by_group(ms, type, group, column="L1"):
    return ms.get(type, group_column=column, group=group)


def test_categorical_definition_equals_the_boolean_split():
    g = PrivilegedGroup.parse("L1=en,fr")
    assert g == PrivilegedGroup("L1", values=["en", "fr"])
    assert g.as_dict() == {"group_column": "L1", "values": ["en", "fr"]}
    assert PrivilegedGroup.coerce(g.as_dict()) == g and g.label == "L1=en,fr"
    cat = FairnessEvaluator([g]).add_arrays(Y, YHAT, {"L1": L1}).compute()
    flag = np.isin(L1, ["en", "fr"]).astype(int)
    num = FairnessEvaluator(["flag"]).add_arrays(Y, YHAT, {"flag": flag}).compute()
    for t in ("StatisticalParityDifference", "DisparateImpact", "AverageOddsDifference"):
        a = cat.get(t, group_column="L1")
        assert a.value == num.get(t, group_column="flag").value
        assert a.parameters["privileged"] == "L1 in {en, fr}"
        assert a.parameters["privileged_values"] == ["en", "fr"]
        assert "threshold" not in a.parameters


def test_hand_worked_per_group_values():
    ms = FairnessEvaluator(group_columns=["L1"]).add_arrays(Y, YHAT, {"L1": L1}).compute()
    # en: y 1 0 1, yhat 1 1 0 -> SR 2/3, TPR 1/2, FPR 1/1, acc 1/3
    assert _by_group(ms, "SelectionRate", "en").value == pytest.approx(2 / 3)
    assert _by_group(ms, "TruePositiveRate", "en").value == 0.5
    assert _by_group(ms, "FalsePositiveRate", "en").value == 1.0
    assert _by_group(ms, "Accuracy", "en").value == pytest.approx(1 / 3)
    # fr: y 1 0, yhat 1 0; es: y 0 0 1 1, yhat 0 1 1 0; de: y 0, yhat 0 (no positives)
    assert _by_group(ms, "GroupCounts", "es").value == {"tp": 1, "fp": 1, "fn": 1, "tn": 1}
    de = _by_group(ms, "TruePositiveRate", "de")
    assert de.value is None and "positive labels" in de.parameters["undefined"]
    # selection rates en 2/3, fr 1/2, es 1/2, de 0
    assert ms.get("DemographicParityDifference", group_column="L1").value == pytest.approx(2 / 3)
    assert ms.get("DemographicParityRatio", group_column="L1").value == 0.0
    eod = ms.get("EqualizedOddsDifference", group_column="L1")
    assert eod.value is None and "'de' has no positive labels" in eod.parameters["undefined"]
    assert eod.parameters["method"] == "between_groups"
    # zero_division=0: de's TPR is 0 -> TPR diff 1 - 0 = 1, FPR diff 1 - 0 = 1
    z = FairnessEvaluator(group_columns=["L1"], zero_division=0).add_arrays(Y, YHAT, {"L1": L1})
    zms = z.compute()
    assert zms.get("EqualizedOddsDifference", group_column="L1").value == 1.0
    assert _by_group(zms, "TruePositiveRate", "de").parameters["zero_division"] == 0.0


def test_to_overall():
    ms = (
        FairnessEvaluator(group_columns=["L1"], method="to_overall")
        .add_arrays(Y, YHAT, {"L1": L1})
        .compute()
    )
    # overall SR 5/10; groups 2/3, 1/2, 1/2, 0 -> max |diff| 1/2, min folded ratio 0
    assert ms.get("DemographicParityDifference", group_column="L1").value == 0.5
    assert ms.get("DemographicParityRatio", group_column="L1").value == 0.0
    assert demographic_parity_difference(Y, YHAT, L1, method="to_overall") == 0.5


def test_functional_api_and_undefined():
    assert demographic_parity_difference(Y, YHAT, L1) == pytest.approx(2 / 3)
    assert demographic_parity_ratio([0, 0], [1, 1], ["a", "b"]) == 1.0
    assert equalized_odds_ratio(Y, YHAT, L1, zero_division=0) == 0.0
    with pytest.raises(UndefinedMetricError, match="'de' has no positive labels"):
        equalized_odds_difference(Y, YHAT, L1)
    with pytest.raises(UndefinedMetricError, match="largest group rate is 0"):
        demographic_parity_ratio([1, 0], [0, 0], ["a", "b"])
    with pytest.raises(InvalidInputError, match="method"):
        demographic_parity_ratio([1, 0], [0, 0], ["a", "b"], method="pairwise")
    with pytest.raises(InvalidInputError, match="agg.*worst_case"):
        equalized_odds_ratio([1, 0], [0, 0], ["a", "b"], agg="max")
    # en: TPR 1/2, FPR 1; fr: TPR 1, FPR 0 -> differences 1/2 and 1; mean 3/4
    two = L1 != "es"
    y, yhat, g = Y[two & (L1 != "de")], YHAT[two & (L1 != "de")], L1[two & (L1 != "de")]
    assert equalized_odds_difference(y, yhat, g) == 1.0
    assert equalized_odds_difference(y, yhat, g, agg="mean") == 0.75


def test_single_group_and_single_row_group():
    one = FairnessEvaluator(group_columns=["g"]).add_arrays([1, 0, 1], [1, 0, 0], {"g": ["a"] * 3})
    ms = one.compute()
    assert ms.get("DemographicParityDifference", group_column="g").value == 0.0
    assert ms.get("DemographicParityRatio", group_column="g").value == 1.0
    assert ms.get("EqualizedOddsDifference", group_column="g").value == 0.0
    ms = (
        FairnessEvaluator(group_columns=["g"])
        .add_arrays([1, 0, 1], [1, 0, 1], {"g": ["a", "a", "b"]})
        .compute()
    )
    assert _by_group(ms, "SelectionRate", "b", "g").value == 1.0
    assert _by_group(ms, "FalsePositiveRate", "b", "g").value is None


def test_numeric_group_values_are_short_text():
    ms = (
        FairnessEvaluator(group_columns=["grade"])
        .add_arrays([1, 0, 1], [1, 0, 0], {"grade": [3.0, 2.5, 3.0]})
        .compute()
    )
    assert _by_group(ms, "SelectionRate", "3", "grade").value == 0.5
    assert _by_group(ms, "SelectionRate", "2.5", "grade").value == 0.0
    ev = FairnessEvaluator(["grade=3"]).add_arrays([1, 0, 1], [1, 0, 0], {"grade": [3, 2, 3]})
    assert ev.compute().get("StatisticalParityDifference", group_column="grade").value == -0.5


def test_evaluate_fairness_on_a_table():
    df = pd.DataFrame({"y": Y, "yhat": YHAT, "L1": L1})
    ms = evaluate_fairness(df, label="y", prediction="yhat", groups=["L1=en"])
    assert ms.get("StatisticalParityDifference", group_column="L1").value == pytest.approx(
        3 / 7 - 2 / 3
    )
    ev = FairnessEvaluator(group_columns=["L1"]).add(df, label="y", prediction="yhat")
    assert ev.compute().get("SelectionRate", group_column="L1", group="fr").value == 0.5


def test_bad_input():
    with pytest.raises(InvalidInputError, match="privileged-group definition or group column"):
        FairnessEvaluator()
    with pytest.raises(InvalidInputError, match="between_groups"):
        FairnessEvaluator(group_columns=["L1"], method="max")
    with pytest.raises(InvalidInputError, match="finite"):
        FairnessEvaluator(group_columns=["L1"], zero_division=float("nan"))
    with pytest.raises(InvalidInputError, match="COLUMN=VALUE"):
        PrivilegedGroup.parse("L1=en,")
    with pytest.raises(InvalidInputError, match="not both"):
        PrivilegedGroup("L1", 1.0, values=["en"])
    ev = FairnessEvaluator(["L1=xx"]).add_arrays(Y, YHAT, {"L1": L1})
    with pytest.raises(InvalidInputError, match="'xx' of 'L1=xx' occurs in no row") as e:
        ev.compute()
    assert e.value.field == "L1"
    ev = FairnessEvaluator(group_columns=["L1"])
    with pytest.raises(InvalidInputError, match="missing group column"):
        ev.add_arrays(Y, YHAT, {"L2": L1})
    with pytest.raises(InvalidInputError, match="row 2.*missing value"):
        ev.add_arrays([1, 0], [1, 0], {"L1": np.array(["en", None], dtype=object)})
    with pytest.raises(InvalidInputError, match="L1=VALUE"):
        FairnessEvaluator(["L1"]).add_arrays(Y, YHAT, {"L1": L1})
    assert ev.is_empty  # nothing was half-added


def test_state_from_before_group_columns_still_loads():
    ev = FairnessEvaluator(["s"]).add_arrays([1, 0, 1], [1, 1, 0], {"s": [1, 0, 1]})
    state = {k: v for k, v in ev.state().items() if k not in ("overall", "privileged_matched")}
    back = FairnessEvaluator.from_state(state)
    assert_same_metrics(back.compute(), ev.compute())


# ---------------------------------------------------------------- properties

rows = st.lists(
    st.tuples(st.integers(0, 1), st.integers(0, 1), st.sampled_from(["a", "b", "c", "d"])),
    min_size=1,
    max_size=40,
)


def _make():
    return FairnessEvaluator(["L1=a"], group_columns=["L1"], zero_division=None)


def _add(ev, part):
    y, yhat, g = (np.array(c) for c in zip(*part))
    return ev.add_arrays(y, yhat, {"L1": g})


@settings(max_examples=60, deadline=None)
@given(rows, st.lists(st.integers(0, 40), max_size=4))
def test_batches_and_merges_equal_one_batch(data, cuts):
    assume(any(r[2] == "a" for r in data))
    bounds = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    parts = [data[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
    one = _add(_make(), data).compute()
    batched = _make()
    for part in parts:
        _add(batched, part)
    merged = _add(_make(), parts[0])
    for part in parts[1:]:
        merged.merge(_add(_make(), part))
    assert assert_same_metrics(one, batched.compute()) > 0
    assert assert_same_metrics(one, merged.compute()) > 0


@settings(max_examples=60, deadline=None)
@given(rows, st.randoms(use_true_random=False))
def test_row_order_does_not_matter(data, rnd):
    assume(any(r[2] == "a" for r in data))
    shuffled = list(data)
    rnd.shuffle(shuffled)
    assume(shuffled != data or len(data) == 1)
    assert assert_same_metrics(_add(_make(), data).compute(), _add(_make(), shuffled).compute()) > 0
