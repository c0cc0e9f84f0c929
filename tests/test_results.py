import json

import pandas as pd
import pytest

from assay.errors import InvalidInputError, UndefinedMetricError
from assay.results import Metric, MetricSet, undefined


def test_metric_json_roundtrip_with_numpy_and_float_keys():
    import numpy as np

    m = Metric(
        "PrecisionRecallCurve",
        {"cat": {0.05: {"tp": np.int64(3), "precision": np.float64(0.75)}}},
        {"label_key": "class"},
    )
    ms = MetricSet([m, undefined("Precision", "requires TP + FP > 0", label_value="dog")])
    data = json.loads(ms.to_json())
    assert data[0]["value"] == {"cat": {"0.05": {"tp": 3, "precision": 0.75}}}
    assert data[1] == {
        "type": "Precision",
        "value": None,
        "parameters": {"label_value": "dog", "undefined": "requires TP + FP > 0"},
    }
    back = MetricSet.from_json(ms.to_json())
    assert back[1] == ms[1]


def test_nan_is_rejected():
    with pytest.raises(ValueError):
        MetricSet([Metric("x", float("nan"))]).to_json()


def test_dataframe_one_row_per_metric_and_parameter_columns():
    ms = MetricSet(
        [Metric("F1", 0.5, {"label_value": "a"}), Metric("Accuracy", 0.9, {"label_key": "k"})]
    )
    df = ms.to_dataframe()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["type", "value", "label_value", "label_key"]
    assert df["value"].tolist() == [0.5, 0.9]
    assert pd.isna(df.loc[1, "label_value"])


def test_filter_and_get():
    ms = MetricSet(
        [Metric("F1", 0.5, {"label_value": "a"}), Metric("F1", 1.0, {"label_value": "b"})]
    )
    assert ms.get("F1", label_value="b").value == 1.0
    with pytest.raises(KeyError):
        ms.get("F1")
    assert len(ms.filter(label_value="zzz")) == 0
    assert len(ms + ms) == 4


def test_error_messages_name_source_record_field():
    e = InvalidInputError("must be in [0, 1], got 1.5", source="preds.csv", record=3, field="score")
    assert str(e) == "preds.csv: row 3: field 'score': must be in [0, 1], got 1.5"
    u = UndefinedMetricError("Recall", "requires TP + FN > 0")
    assert "Recall" in str(u) and "TP + FN" in str(u)
