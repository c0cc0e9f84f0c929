"""Labels, predictions and the positive label must match; old names keep working one release."""

import numpy as np
import pandas as pd
import pytest

from assay.errors import InvalidInputError
from assay.fairness import (
    FairnessEvaluator,
    PrivilegedGroup,
    evaluate_fairness,
    group_counts,
    statistical_parity_difference,
)

SEX = [1, 1, 0, 0]


def _df(y, yhat):
    return pd.DataFrame({"y": y, "yhat": yhat, "sex": SEX})


def test_text_predictions_against_numeric_labels_are_an_error_naming_the_values():
    with pytest.raises(InvalidInputError) as e:
        evaluate_fairness(
            _df([1, 0, 1, 0], ["yes", "no", "no", "yes"]),
            label="y",
            prediction="yhat",
            groups=["sex"],
        )
    msg = str(e.value)
    assert "field 'yhat'" in msg and "labels (y) hold 0, 1" in msg and "'no', 'yes'" in msg


def test_positive_label_of_another_kind_is_an_error():
    with pytest.raises(InvalidInputError, match="positive label 1 is a number but the labels"):
        evaluate_fairness(
            _df(["yes", "no", "yes", "no"], ["yes", "no", "no", "yes"]),
            label="y",
            prediction="yhat",
            groups=["sex"],
        )


def test_positive_label_never_seen_is_an_error():
    with pytest.raises(InvalidInputError, match="positive label 'Yes' occurs in neither"):
        evaluate_fairness(
            _df(["yes", "no", "yes", "no"], ["yes", "no", "no", "yes"]),
            label="y",
            prediction="yhat",
            groups=["sex"],
            positive_label="Yes",
        )


def test_disjoint_vocabularies_are_an_error():
    with pytest.raises(InvalidInputError, match="share no value"):
        evaluate_fairness(
            _df(["yes", "no", "yes", "no"], ["Y", "N", "N", "Y"]),
            label="y",
            prediction="yhat",
            groups=["sex"],
            positive_label="yes",
        )


def test_a_column_mixing_numbers_and_text_is_an_error_naming_the_row():
    with pytest.raises(InvalidInputError, match="row 3: field 'y': one column holds numbers"):
        evaluate_fairness(
            _df([1, 0, "1", 0], [1, 0, 1, 0]), label="y", prediction="yhat", groups=["sex"]
        )


def test_a_batch_of_another_kind_is_an_error_and_changes_nothing():
    ev = FairnessEvaluator(["sex"], positive_label=1).add(
        _df([1, 0, 1, 0], [1, 0, 0, 1]), label="y", prediction="yhat"
    )
    with pytest.raises(InvalidInputError, match="positive label 1 is a number but the labels"):
        ev.add_arrays(["1"], ["1"], {"sex": [1]})
    assert ev.compute().get("Accuracy").value == 0.5  # the bad batch changed nothing


def test_all_negative_data_is_still_accepted():
    # One value seen (all 0): that may be the negative class alone, not a mismatch.
    ms = evaluate_fairness(
        _df([0, 0, 0, 0], [0, 0, 0, 0]), label="y", prediction="yhat", groups=["sex"]
    )
    assert ms.get("Accuracy").value == 1.0
    assert ms.get("Precision").value is None


def test_numbers_of_different_types_match():
    ms = evaluate_fairness(
        _df([1.0, 0.0, 1.0, 0.0], [True, False, False, True]),
        label="y",
        prediction="yhat",
        groups=["sex"],
    )
    assert ms.get("Accuracy").value == 0.5


def test_the_names_removed_in_0_2_0_fail_naming_the_new_ones():
    calls = {
        "pos_label": [
            lambda: FairnessEvaluator(["sex"], pos_label="H"),
            lambda: statistical_parity_difference(["a", "b"], [True, False], pos_label="a"),
            lambda: group_counts([1, 0], [1, 0], [True, False], pos_label=0),
        ],
        "sensitive": [
            lambda: FairnessEvaluator(["sex"]).add_arrays([1], [1], sensitive={"sex": [1]})
        ],
        "column": [lambda: PrivilegedGroup(column="age")],
    }
    new = {"pos_label": "positive_label", "sensitive": "group_values", "column": "group_column"}
    for old, fns in calls.items():
        for call in fns:
            with pytest.raises(TypeError, match=f"{old}= was renamed; use {new[old]}="):
                call()
    assert not hasattr(FairnessEvaluator(["sex"]), "pos_label")
    assert not hasattr(PrivilegedGroup("age"), "column")
    c = group_counts([1, 0], [1, 0], [True, False], positive_label=0)
    assert c.tp.tolist() == [1, 0]


def test_group_definitions_in_every_form_and_in_words():
    as_text = PrivilegedGroup.parse("mean texture:18.84")
    assert PrivilegedGroup.coerce(as_text.as_dict()) == as_text
    assert as_text.describe() == "mean texture > 18.84" and as_text.label == "mean texture:18.84"
    with pytest.raises(InvalidInputError) as e:
        PrivilegedGroup.parse("age:x")
    assert "--" not in str(e.value)  # no command-line flag names outside the CLI
    with pytest.raises(InvalidInputError, match="finite"):
        PrivilegedGroup.parse("age:nan")


def test_records_carry_group_column_and_group():
    ms = evaluate_fairness(
        pd.DataFrame({"y": [1, 0, 1, 0], "yhat": [1, 1, 0, 0], "t": [20.5, 19.0, 10.0, 12.0]}),
        label="y",
        prediction="yhat",
        groups=[PrivilegedGroup("t", 18.84)],
    )
    spd = ms.get("StatisticalParityDifference", group_column="t")
    assert spd.parameters["threshold"] == 18.84 and spd.parameters["privileged"] == "t > 18.84"
    assert {m.parameters["group"] for m in ms.filter("GroupCounts")} == {
        "privileged",
        "unprivileged",
    }
    for m in ms:
        assert "sensitive" not in m.parameters


def test_empty_evaluator_refuses():
    with pytest.raises(InvalidInputError, match="no data was added"):
        FairnessEvaluator(["sex"]).compute()
    with pytest.raises(InvalidInputError, match="no data was added"):
        FairnessEvaluator(["sex"]).add_arrays(
            np.array([], int), np.array([], int), {"sex": []}
        ).compute()
