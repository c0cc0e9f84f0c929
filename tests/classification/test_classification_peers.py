"""Differential tests: assay's classification metrics against scikit-learn and valor-lite."""

import numpy as np
import pandas as pd
import pytest
from classkit import make_multiclass
from sklearn import metrics as skm

from assay.classification import ClassificationEvaluator, confusion_counts, roc_auc_score

TOL = 1e-9


def _long_form(labels, y, p):
    n = len(y)
    gts = pd.DataFrame({"uid": [f"d{i}" for i in range(n)], "value": y})
    pds = pd.DataFrame(
        {
            "uid": np.repeat([f"d{i}" for i in range(n)], len(labels)),
            "value": np.tile(labels, n),
            "score": p.ravel(),
        }
    )
    return gts, pds


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hardmax_metrics_match_sklearn(seed):
    labels, y, p = make_multiclass(500, 5, seed)
    ms = ClassificationEvaluator(zero_division=0.0).add_arrays(y, p, labels=labels).compute()
    y_pred = np.asarray(labels)[np.argmax(p, axis=1)]  # first max -> first sorted label, as assay
    prec, rec, f1, _ = skm.precision_recall_fscore_support(
        y, y_pred, labels=labels, zero_division=0.0
    )
    cm = skm.confusion_matrix(y, y_pred, labels=labels)
    compared = 0
    for j, lab in enumerate(labels):
        compared += 1
        q = {"label_value": lab, "score_threshold": 0.0}
        assert abs(ms.get("Precision", **q).value - prec[j]) < TOL
        assert abs(ms.get("Recall", **q).value - rec[j]) < TOL
        assert abs(ms.get("F1", **q).value - f1[j]) < TOL
        c = ms.get("Counts", **q).value
        assert c["tp"] == cm[j, j]
        assert c["fp"] == cm[:, j].sum() - cm[j, j]
        assert c["fn"] == cm[j, :].sum() - cm[j, j]
        assert c["tn"] == cm.sum() - cm[j, :].sum() - cm[:, j].sum() + cm[j, j]
    assert abs(ms.get("Accuracy", score_threshold=0.0).value - skm.accuracy_score(y, y_pred)) < TOL
    assert compared == len(labels) > 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_roc_auc_matches_sklearn_with_ties(seed):
    labels, y, p = make_multiclass(500, 5, seed, decimals=1)  # coarse rounding: many ties
    ms = (
        ClassificationEvaluator(metrics=["ROCAUC", "mROCAUC"])
        .add_arrays(y, p, labels=labels)
        .compute()
    )
    defined = []
    for j, lab in enumerate(labels):
        m = ms.get("ROCAUC", label_value=lab)
        truth = y == lab
        if truth.all() or not truth.any():
            assert m.value is None and "requires both" in m.parameters["undefined"]
            continue
        expect = skm.roc_auc_score(truth, p[:, j])
        assert abs(m.value - expect) < TOL
        defined.append(expect)
    assert len(defined) > 0
    mroc = ms.get("mROCAUC")
    assert abs(mroc.value - np.mean(defined)) < TOL
    assert mroc.parameters["labels_excluded"] == [labels[-1]]


def test_binary_roc_auc_function_matches_sklearn():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 10_000)
    s = np.round(rng.random(10_000) * 0.5 + 0.3 * y, 2)
    assert abs(roc_auc_score(y, s) - skm.roc_auc_score(y, s)) < TOL


def test_confusion_counts_matches_sklearn():
    rng = np.random.default_rng(4)
    y = rng.choice(list("abcd"), 300)
    yp = rng.choice(list("abce"), 300)  # 'd' never predicted, 'e' never true
    c = confusion_counts(y, yp)
    labels = sorted(c)
    cm = skm.confusion_matrix(y, yp, labels=labels)
    compared = 0
    for j, lab in enumerate(labels):
        assert c[lab]["tp"] == cm[j, j]
        assert c[lab]["fp"] + c[lab]["tp"] == cm[:, j].sum()
        assert c[lab]["fn"] + c[lab]["tp"] == cm[j, :].sum()
        compared += 1
    assert compared == 5


def test_long_form_equals_arrays(multiclass):
    labels, y, p = multiclass
    a = (
        ClassificationEvaluator()
        .add_arrays(y, p, labels=labels, uids=[f"d{i}" for i in range(len(y))])
        .compute()
    )
    b = ClassificationEvaluator().add(*_long_form(labels, y, p)).compute()
    assert a.to_json() == b.to_json()


def test_pr_curve_counts_brute_force(multiclass):
    labels, y, p = multiclass
    ms = (
        ClassificationEvaluator(metrics=["PrecisionRecallCurve"], zero_division=None)
        .add_arrays(y, p, labels=labels)
        .compute()
    )
    curve = ms.get("PrecisionRecallCurve").value
    compared = 0
    for j, lab in enumerate(labels):
        for t, row in curve[lab].items():
            compared += 1
            pred = p[:, j] >= t
            truth = y == lab
            tp, fp = int((pred & truth).sum()), int((pred & ~truth).sum())
            fn, tn = int((~pred & truth).sum()), int((~pred & ~truth).sum())
            assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (tp, fp, fn, tn)
            assert row["precision"] == (tp / (tp + fp) if tp + fp else None)
            assert row["recall"] == (tp / (tp + fn) if tp + fn else None)
    assert compared == len(labels) * 19


# ------------------------------------------------------------------ valor-lite


def _valor(labels, y, p, thresholds):
    from valor_lite.classification import Classification, Loader

    loader = Loader.in_memory()
    loader.add_data(
        [
            Classification(
                uid=f"d{i}",
                groundtruth=str(y[i]),
                predictions=list(labels),
                scores=[float(v) for v in p[i]],
            )
            for i in range(len(y))
        ]
    )
    ev = loader.finalize()
    pr = ev.compute_precision_recall(score_thresholds=list(thresholds))
    roc = ev.compute_rocauc()
    out = {}
    for group in (pr, roc):
        for items in group.values():
            for m in items:
                d = (
                    m.to_dict()
                    if hasattr(m, "to_dict")
                    else {"type": m.type, "value": m.value, "parameters": m.parameters}
                )
                out[
                    (
                        d["type"],
                        d["parameters"].get("label"),
                        d["parameters"].get("score_threshold"),
                    )
                ] = d["value"]
    return out


@pytest.mark.parametrize("seed", [11, 12])
def test_matches_valor_lite(seed):
    labels, y, p = make_multiclass(400, 4, seed, decimals=3)
    thresholds = [0.0, 0.25, 0.5, 0.75]
    ours = (
        ClassificationEvaluator(score_thresholds=thresholds, zero_division=0.0)
        .add_arrays(y, p, labels=labels)
        .compute()
    )
    theirs = _valor(labels, y, p, thresholds)
    compared = 0
    for m in ours:
        if m.type in ("Counts", "Precision", "Recall", "F1"):
            v = theirs[(m.type, m.parameters["label_value"], m.parameters["score_threshold"])]
        elif m.type == "Accuracy":
            v = theirs[("Accuracy", None, m.parameters["score_threshold"])]
        elif m.type == "ROCAUC":
            v = theirs[("ROCAUC", m.parameters["label_value"], None)]
            if (
                m.value is None
            ):  # label never in ground truth: valor-lite reports 0.0, assay says undefined
                assert v == 0.0
                continue
        else:
            continue
        if isinstance(v, dict):
            assert m.value == v, (m, v)
        else:
            assert abs(m.value - v) < TOL, (m, v)
        compared += 1
    assert compared > 50
