"""``ROCCurve`` records against scikit-learn's ``roc_curve`` (drop_intermediate=True)."""

import numpy as np
import pytest
from classkit import make_multiclass
from sklearn import metrics as skm

from assay.classification import DEFAULT_METRICS, ClassificationEvaluator


def _check(curve, y_true, y_score):
    fpr, tpr, th = skm.roc_curve(y_true, y_score, drop_intermediate=True)
    assert curve["fpr"] == fpr.tolist()  # exact: the same counts over the same totals
    assert curve["tpr"] == tpr.tolist()
    assert curve["thresholds"][0] is None and np.isinf(th[0])
    assert curve["thresholds"][1:] == th[1:].tolist()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiclass_roc_curves_match_sklearn(seed):
    labels, y, p = make_multiclass(600, 4, seed)  # rounded scores: ties share a threshold
    ms = ClassificationEvaluator(metrics=["ROCCurve", "ROCAUC"]).add_arrays(y, p, labels=labels)
    ms = ms.compute()
    value = ms.get("ROCCurve").value
    assert list(value) == list(labels)
    assert value[labels[-1]] is None  # the last label never occurs: ROC undefined
    for j, lab in enumerate(labels[:-1]):
        _check(value[lab], np.asarray(y) == lab, p[:, j])
        auc = np.trapezoid(value[lab]["tpr"], value[lab]["fpr"])
        assert auc == pytest.approx(ms.get("ROCAUC", label_value=lab).value, abs=1e-12)


def test_binary_score_column_and_one_class_label():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 300).astype(bool)
    s = np.clip(rng.normal(0.4 + 0.3 * y, 0.2), 0, 1)
    ev = ClassificationEvaluator(metrics=["ROCCurve"]).add_arrays(
        np.where(y, "yes", "no"), s, labels=["no", "yes"]
    )
    value = ev.compute().get("ROCCurve").value
    _check(value["yes"], y, s)
    _check(value["no"], ~y, 1.0 - s)
    only = ClassificationEvaluator(metrics=["ROCCurve"]).add_arrays(
        ["a", "a"], np.array([[0.9, 0.1], [0.6, 0.4]]), labels=["a", "b"]
    )
    assert only.compute().get("ROCCurve").value == {"a": None, "b": None}


def test_roc_curve_is_opt_in():
    assert "ROCCurve" not in DEFAULT_METRICS
