"""Evaluator semantics: batches, undefined metrics, detailed curves, bad input."""

import numpy as np
import pandas as pd
import pytest
from classkit import make_multiclass
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.classification import (
    ClassificationEvaluator,
    accuracy_score,
    evaluate_classification,
    f1_score,
    precision_score,
    recall_score,
)
from assay.errors import InvalidInputError, UndefinedMetricError

# ------------------------------------------------------------------ batches


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 60),
    k=st.integers(2, 4),
    seed=st.integers(0, 10_000),
    cuts=st.lists(st.floats(0, 1), max_size=4),
)
def test_any_batch_split_equals_one_batch(n, k, seed, cuts):
    labels, y, p = make_multiclass(n, k + 1, seed, decimals=1)
    uids = np.array([f"u{i}" for i in range(n)])
    opts = dict(score_thresholds=(0.0, 0.3, 0.6), pr_curve_max_examples=2)
    whole = ClassificationEvaluator(**opts).add_arrays(y, p, labels=labels, uids=uids).compute()
    bounds = sorted({0, n, *(int(c * n) for c in cuts)})
    parts = [ClassificationEvaluator(**opts) for _ in bounds[:-1]]
    for ev, a, b in zip(parts, bounds[:-1], bounds[1:]):
        if b > a:
            ev.add_arrays(y[a:b], p[a:b], labels=labels, uids=uids[a:b])
    merged = parts[0]
    for ev in parts[1:]:
        merged.merge(ev)
    assert merged.compute().to_json() == whole.to_json()


def test_batches_with_different_label_sets():
    gt1 = [{"uid": "a", "value": "cat"}]
    pd1 = [{"uid": "a", "value": "cat", "score": 0.7}]
    gt2 = [{"uid": "b", "value": "dog"}]
    pd2 = [{"uid": "b", "value": "bird", "score": 0.6}]
    ev = ClassificationEvaluator().add(gt1, pd1).add(gt2, pd2)
    ms = ev.compute()
    assert ms.get("Precision", label_value="bird", score_threshold=0.0).value == 0.0
    assert ms.get("Recall", label_value="dog", score_threshold=0.0).value == 0.0
    assert ms.get("Accuracy", score_threshold=0.0).value == 0.5
    one = evaluate_classification(gt1 + gt2, pd1 + pd2)
    assert one.to_json() == ms.to_json()


def test_duplicate_uid_across_batches_is_an_error():
    ev = ClassificationEvaluator().add(
        [{"uid": "a", "value": "x"}], [{"uid": "a", "value": "x", "score": 0.5}]
    )
    ev.add([{"uid": "a", "value": "y"}], [{"uid": "a", "value": "y", "score": 0.5}])
    with pytest.raises(InvalidInputError, match="'a' occurs in more than one batch"):
        ev.compute()


# ------------------------------------------------------------------ hand-worked examples


GTS = [
    {"uid": "1", "value": "cat"},
    {"uid": "2", "value": "cat"},
    {"uid": "3", "value": "dog"},
    {"uid": "4", "value": "dog"},
]
PDS = [
    {"uid": "1", "value": "cat", "score": 0.9},
    {"uid": "1", "value": "dog", "score": 0.1},
    {"uid": "2", "value": "cat", "score": 0.3},
    {"uid": "2", "value": "dog", "score": 0.6},
    {"uid": "3", "value": "dog", "score": 0.8},
    {"uid": "4", "value": "cat", "score": 0.2},
]


def test_hand_worked_aggregate_metrics():
    ms = evaluate_classification(GTS, PDS, score_thresholds=[0.0, 0.5])
    # threshold 0: tops = cat(1) ok, dog(2) wrong, dog(3) ok, cat(4) wrong
    q = {"score_threshold": 0.0}
    assert ms.get("Counts", label_value="cat", **q).value == {"tp": 1, "fp": 1, "fn": 1, "tn": 1}
    assert ms.get("Precision", label_value="cat", **q).value == 0.5
    assert ms.get("Accuracy", **q).value == 0.5
    # threshold 0.5: datum 4's top (cat 0.2) no longer counts
    q = {"score_threshold": 0.5}
    assert ms.get("Counts", label_value="cat", **q).value == {"tp": 1, "fp": 0, "fn": 1, "tn": 2}
    assert ms.get("Precision", label_value="cat", **q).value == 1.0
    assert ms.get("Recall", label_value="dog", **q).value == 0.5
    assert ms.get("F1", label_value="dog", **q).value == pytest.approx(2 * 0.5 * 0.5 / 1.0)
    # ROC AUC for cat: positives {0.9, 0.3}, negatives {missing -> -inf, 0.2}: all pairs won
    assert ms.get("ROCAUC", label_value="cat").value == 1.0
    # dog: positives {0.8, missing}, negatives {0.1, 0.6}: 0.8 beats both, missing beats none
    assert ms.get("ROCAUC", label_value="dog").value == 0.5
    assert ms.get("mROCAUC").value == 0.75


def test_hand_worked_detailed_curve():
    ms = evaluate_classification(
        GTS,
        PDS,
        pr_curve_max_examples=5,
        metrics=["DetailedPrecisionRecallCurve", "PrecisionRecallCurve"],
    )
    d = ms.get("DetailedPrecisionRecallCurve").value
    c = ms.get("PrecisionRecallCurve").value
    # cat @ 0.25: qualified cat predictions on 1 (0.9, tp), 2 (0.3, tp); 4 is below.
    cat = d["cat"][0.25]
    assert cat["tp"]["total"] == 2 and cat["tp"]["observations"]["all"]["examples"] == ["1", "2"]
    assert cat["fp"]["total"] == 0
    # dog @ 0.25: fp on 2 (dog 0.6 on a cat); fn on 4 (truth dog, no dog prediction, cat 0.2 < 0.25)
    dog = d["dog"][0.25]
    assert dog["fp"]["observations"]["misclassifications"] == {"count": 1, "examples": ["2"]}
    assert dog["fn"]["observations"]["no_predictions"] == {"count": 1, "examples": ["4"]}
    assert dog["fn"]["observations"]["misclassifications"]["count"] == 0
    # dog @ 0.15: datum 4's cat 0.2 passes -> its false negative is a misclassification
    dog = d["dog"][0.15]
    assert dog["fn"]["observations"]["misclassifications"] == {"count": 1, "examples": ["4"]}
    # cat @ 0.35: datum 2 (cat 0.3 < 0.35) is a fn misclassified as dog (0.6 passes)
    cat = d["cat"][0.35]
    assert cat["fn"]["observations"]["misclassifications"] == {"count": 1, "examples": ["2"]}
    for lab in ("cat", "dog"):
        for t, row in d[lab].items():
            assert row["tp"]["total"] == c[lab][t]["tp"]
            assert row["fp"]["total"] == c[lab][t]["fp"]
            assert row["fn"]["total"] == c[lab][t]["fn"]
            assert sum(o["count"] for o in row["fn"]["observations"].values()) == row["fn"]["total"]


def test_detailed_examples_are_first_qualifying_datums_brute_force(multiclass):
    labels, y, p = multiclass
    n_max = 3
    ms = (
        ClassificationEvaluator(
            metrics=["DetailedPrecisionRecallCurve"], pr_curve_max_examples=n_max
        )
        .add_arrays(y, p, labels=labels)
        .compute()
    )
    d = ms.get("DetailedPrecisionRecallCurve").value
    uids = np.arange(len(y)).astype(str)
    for j, lab in enumerate(labels):
        truth = y == lab
        other_best = np.array(
            [max(p[i, m] for m in range(len(labels)) if labels[m] != y[i]) for i in range(len(y))]
        )
        s = p[:, j]
        for t, row in list(d[lab].items())[
            ::6
        ]:  # a few thresholds per label keep the brute force cheap
            tp = truth & (s >= t)
            fp = ~truth & (s >= t)
            fn_mis = truth & (s < t) & (other_best >= t)
            fn_none = truth & (s < t) & (other_best < t)
            for obs, mask in (
                (row["tp"]["observations"]["all"], tp),
                (row["fp"]["observations"]["misclassifications"], fp),
                (row["fn"]["observations"]["misclassifications"], fn_mis),
                (row["fn"]["observations"]["no_predictions"], fn_none),
            ):
                assert obs["count"] == mask.sum()
                assert obs["examples"] == list(uids[mask][:n_max])


def test_detailed_curve_memory_shape_at_scale():
    # 200k datums x 4 labels: only n_max examples are kept, never an n x n structure.
    labels, y, p = make_multiclass(200_000, 4, seed=5)
    ms = (
        ClassificationEvaluator(metrics=["DetailedPrecisionRecallCurve"], pr_curve_max_examples=2)
        .add_arrays(y, p, labels=labels)
        .compute()
    )
    d = ms.get("DetailedPrecisionRecallCurve").value
    assert all(
        len(o["examples"]) <= 2
        for lab in d.values()
        for row in lab.values()
        for part in row.values()
        for o in part["observations"].values()
    )


# ------------------------------------------------------------------ undefined is not zero


def test_undefined_metrics_are_none_with_reason():
    ms = evaluate_classification(
        [{"uid": "a", "value": "cat"}, {"uid": "b", "value": "cat"}],
        [{"uid": "a", "value": "cat", "score": 0.9}, {"uid": "b", "value": "dog", "score": 0.8}],
    )
    p = ms.get("Recall", label_value="dog", score_threshold=0.0)  # dog never true
    assert p.value is None and p.parameters["undefined"] == "requires TP + FN > 0"
    assert ms.get("Precision", label_value="dog", score_threshold=0.0).value == 0.0
    roc = ms.get("ROCAUC", label_value="cat")  # only positives
    assert roc.value is None and "both positive and negative" in roc.parameters["undefined"]
    assert ms.get("mROCAUC").value is None
    curve = ms.get("PrecisionRecallCurve").value
    assert curve["dog"][0.9]["recall"] is None


def test_zero_division_replaces_undefined():
    ms = evaluate_classification(
        [{"uid": "a", "value": "cat"}],
        [{"uid": "a", "value": "cat", "score": 0.9}],
        zero_division=0.0,
    )
    assert ms.get("Precision", label_value="cat", score_threshold=0.0).value == 1.0


def test_binary_functions_trap_as_spec_says():
    with pytest.raises(UndefinedMetricError, match="Accuracy.*at least one"):
        accuracy_score([], [])
    with pytest.raises(UndefinedMetricError, match="TP \\+ FP > 0"):
        precision_score([1, 0], [0, 0])
    with pytest.raises(UndefinedMetricError, match="TP \\+ FN > 0"):
        recall_score([0, 0], [1, 0])
    with pytest.raises(UndefinedMetricError):
        f1_score([0, 0], [0, 0])
    assert precision_score([1, 0], [0, 0], zero_division=0.0) == 0.0
    assert recall_score(["y", "n", "y"], ["y", "y", "n"], positive_label="y") == 0.5
    assert f1_score([1, 1, 0], [1, 0, 0]) == pytest.approx(2 / 3)


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "gts, pds, message",
    [
        (
            [{"uid": "a"}],
            [{"uid": "a", "value": "x", "score": 0.5}],
            "groundtruths: field 'value': missing column",
        ),
        (
            [{"uid": "a", "value": "x"}],
            [{"uid": "a", "value": "x"}],
            "predictions: field 'score': missing column",
        ),
        (
            [{"uid": "a", "value": "x"}],
            [{"uid": "a", "value": "x", "score": 1.5}],
            "predictions: row 1: field 'score': expected a number in \\[0.0, 1.0\\], got 1.5",
        ),
        (
            [{"uid": "a", "value": "x"}],
            [{"uid": "a", "value": "x", "score": float("nan")}],
            "row 1: field 'score'",
        ),
        (
            [{"uid": "a", "value": "x"}],
            [{"uid": "a", "value": "x", "score": 0.5}, {"uid": "b", "value": "x", "score": 0.5}],
            "row 2: field 'uid': uid 'b' has no ground truth",
        ),
        (
            [{"uid": "a", "value": "x"}, {"uid": "a", "value": "y"}],
            [],
            "groundtruths: row 2: field 'uid': duplicate ground truth",
        ),
        (
            [{"uid": "a", "value": "x"}],
            [{"uid": "a", "value": "x", "score": 0.5}, {"uid": "a", "value": "x", "score": 0.4}],
            "predictions: row 2: field 'value': duplicate prediction",
        ),
        (
            [{"uid": "a", "value": "x"}],
            [{"uid": "a", "key": "color", "value": "x", "score": 0.5}],
            "no ground truth for key 'color'",
        ),
    ],
)
def test_bad_input_names_source_row_field(gts, pds, message):
    with pytest.raises(InvalidInputError, match=message):
        evaluate_classification(
            gts, pd.DataFrame(pds, columns=None if pds else ["uid", "value", "score"])
        )


def test_multiple_label_keys_are_independent():
    gts = [
        {"uid": "a", "key": "animal", "value": "dog"},
        {"uid": "a", "key": "color", "value": "red"},
        {"uid": "b", "key": "animal", "value": "cat"},
        {"uid": "b", "key": "color", "value": "red"},
    ]
    pds = [
        {"uid": "a", "key": "animal", "value": "dog", "score": 0.9},
        {"uid": "a", "key": "color", "value": "blue", "score": 0.9},
        {"uid": "b", "key": "animal", "value": "dog", "score": 0.7},
        {"uid": "b", "key": "color", "value": "red", "score": 0.6},
    ]
    ms = evaluate_classification(gts, pds)
    assert ms.get("Accuracy", label_key="animal", score_threshold=0.0).value == 0.5
    assert ms.get("Accuracy", label_key="color", score_threshold=0.0).value == 0.5
    assert (
        ms.get("Precision", label_key="color", label_value="red", score_threshold=0.0).value == 1.0
    )
    assert {m.parameters["label_key"] for m in ms} == {"animal", "color"}
