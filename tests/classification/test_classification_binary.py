"""The binary fast path (one score column) against the dense path and scikit-learn; the
evaluator's contract details that the shared contract cases leave out; removed names."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from assay.classification import ClassificationEvaluator, evaluate_classification
from assay.errors import InvalidInputError

TOL = 1e-12


def _binary(n, seed, decimals=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(np.clip(rng.normal(0.4 + 0.2 * y, 0.25), 0, 1), decimals)
    s[:3] = [0.5, 1e-17, 1.0]  # a tie at 0.5, a score whose complement rounds to 1.0
    return y, s


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 60),
    seed=st.integers(0, 10_000),
    labels=st.sampled_from([[0, 1], ["yes", "no"], ["b", "a"], [False, True]]),
    decimals=st.integers(1, 3),
)
def test_one_score_column_equals_two_columns(n, seed, labels, decimals):
    y01, s = _binary(max(n, 3), seed, decimals)
    y = np.asarray(labels, dtype=object)[y01]
    opts = dict(score_thresholds=[0.0, 0.3, 0.5, 0.7], pr_curve_max_examples=2)
    fast = ClassificationEvaluator(**opts).add_arrays(y, s, labels=labels).compute()
    dense = (
        ClassificationEvaluator(**opts)
        .add_arrays(y, np.stack([1.0 - s, s], axis=1), labels=labels)
        .compute()
    )
    assert fast.to_json() == dense.to_json()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_evaluator_matches_sklearn(seed):
    y, s = _binary(5000, seed)
    ms = (
        ClassificationEvaluator(score_thresholds=[0.0], zero_division=0.0)
        .add_arrays(y, s, labels=[0, 1])
        .compute()
    )
    y_pred = (s > 1.0 - s).astype(int)  # the top label; a tie goes to the first label, 0
    prec, rec, f1, _ = skm.precision_recall_fscore_support(y, y_pred, labels=[0, 1])
    compared = 0
    for j in (0, 1):
        q = {"label_value": str(j), "score_threshold": 0.0}
        assert abs(ms.get("Precision", **q).value - prec[j]) < TOL
        assert abs(ms.get("Recall", **q).value - rec[j]) < TOL
        assert abs(ms.get("F1", **q).value - f1[j]) < TOL
        score = s if j == 1 else 1.0 - s
        assert (
            abs(ms.get("ROCAUC", label_value=str(j)).value - skm.roc_auc_score(y == j, score)) < TOL
        )
        compared += 4
    assert abs(ms.get("Accuracy", score_threshold=0.0).value - skm.accuracy_score(y, y_pred)) < TOL
    assert compared == 8


def test_batches_of_the_binary_form_join_with_the_dense_form():
    y, s = _binary(300, 5)
    one = ClassificationEvaluator().add_arrays(y, s, labels=[0, 1]).compute()
    mixed = (
        ClassificationEvaluator()
        .add_arrays(y[:100], s[:100], labels=[0, 1])
        .add_arrays(y[100:], np.stack([1 - s[100:], s[100:]], axis=1), labels=[0, 1])
        .compute()
    )
    assert one.to_json() == mixed.to_json()


def test_examples_do_not_depend_on_batch_order():
    y, s = _binary(200, 6)
    uids = np.array([f"u{i:03d}" for i in range(200)])
    rng = np.random.default_rng(0)
    perm = rng.permutation(200)
    parts = np.array_split(perm, 4)
    opts = dict(metrics=["DetailedPrecisionRecallCurve"], pr_curve_max_examples=3)
    whole = ClassificationEvaluator(**opts).add_arrays(y, s, labels=[0, 1], uids=uids).compute()
    evs = [
        ClassificationEvaluator(**opts).add_arrays(y[p], s[p], labels=[0, 1], uids=uids[p])
        for p in parts
    ]
    merged = evs[3].merge(evs[1]).merge(evs[0]).merge(evs[2])
    assert merged.compute().to_json() == whole.to_json()
    curve = whole.get("DetailedPrecisionRecallCurve").value
    ex = curve["1"][0.5]["tp"]["observations"]["all"]["examples"]
    assert ex == sorted(ex) and len(ex) == 3


def test_state_is_plain_arrays_and_round_trips():
    ev = ClassificationEvaluator().add(
        [{"uid": "a", "value": "cat"}, {"uid": "b", "value": "dog"}],
        [{"uid": "a", "value": "cat", "score": 0.9}, {"uid": "b", "value": "cat", "score": 0.4}],
    )
    state = ev.state()
    assert all(v.dtype != object for v in state.values())
    assert state["blocks.0.uids"].dtype.kind == "U"
    assert state["blocks.0.labels"].tolist() == ["cat", "dog"]
    back = ClassificationEvaluator.from_state(state)
    assert back.compute().to_json() == ev.compute().to_json()


def test_empty_evaluator_refuses():
    with pytest.raises(InvalidInputError, match="no data was added"):
        ClassificationEvaluator().compute()
    with pytest.raises(InvalidInputError, match="no data was added"):
        evaluate_classification(
            pd.DataFrame(columns=["uid", "value"]), pd.DataFrame(columns=["uid", "value", "score"])
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"score_thresholds": [2]}, "score_thresholds: index 0: must be a number in \\[0, 1\\]"),
        ({"score_thresholds": [float("nan")]}, "score_thresholds: index 0: must be a number in"),
        ({"pr_curve_thresholds": [0.5, -0.1]}, "pr_curve_thresholds: index 1"),
        ({"pr_curve_max_examples": -1}, "pr_curve_max_examples: must be an integer >= 0"),
        ({"metrics": ["AUC"]}, "metrics: unknown \\['AUC'\\]; choose from Counts, "),
        ({"compact": True}, "compact: keeps counts, not datums, but pr_curve_max_examples"),
        (
            {"compact": True, "pr_curve_max_examples": 0, "metrics": ["Examples"]},
            "compact: .* metric types \\['Examples'\\] name datums",
        ),
    ],
)
def test_bad_configuration(options, message):
    with pytest.raises(InvalidInputError, match=message):
        ClassificationEvaluator(**options)


def test_merge_refuses_another_configuration():
    a = ClassificationEvaluator().add_arrays([0, 1], [0.2, 0.8], labels=[0, 1])
    b = ClassificationEvaluator(zero_division=0).add_arrays([0, 1], [0.2, 0.8], labels=[0, 1])
    with pytest.raises(InvalidInputError, match="zero_division"):
        a.merge(b)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"y_true": [0, 2], "y_score": [0.1, 0.2]}, "y_true: index 1: label 2 is not in labels"),
        ({"y_true": [0, 1], "y_score": [0.1, 1.2]}, "y_score: index 1: field '1': score must be"),
        ({"y_true": [0, 1], "y_score": [0.1]}, "lengths differ"),
        ({"y_true": [0, 1], "y_score": [0.1, 0.2], "uids": ["a", "a"]}, "duplicate uid 'a'"),
    ],
)
def test_bad_arrays(kwargs, message):
    with pytest.raises(InvalidInputError, match=message):
        ClassificationEvaluator().add_arrays(labels=[0, 1], **kwargs)


def test_a_uid_that_is_a_list_is_an_error_naming_row_and_field():
    with pytest.raises(InvalidInputError, match="groundtruths: row 2: field 'uid': expected a str"):
        evaluate_classification(
            [{"uid": "a", "value": "x"}, {"uid": ["b"], "value": "x"}],
            [{"uid": "a", "value": "x", "score": 0.5}],
        )


def test_the_names_removed_in_0_2_0_are_gone_or_name_their_replacement():
    from assay.classification import compute, f1_score, precision_score, recall_score

    for old in ("ratio", "f1_from_counts"):  # assay.ratios.ratio, assay.ratios.f1_from_counts
        with pytest.raises(AttributeError):
            getattr(compute, old)
    for fn in (precision_score, recall_score, f1_score):
        with pytest.raises(TypeError, match="pos_label= was renamed; use positive_label="):
            fn(["y", "n"], ["y", "y"], pos_label="y")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert precision_score(["y", "n"], ["y", "y"], positive_label="y") == 0.5


@pytest.mark.parametrize("decimals", [None, 1, 3])
def test_roc_auc_with_and_without_repeated_scores_matches_sklearn(decimals):
    from assay.classification import roc_auc_score

    rng = np.random.default_rng(9)
    y = rng.integers(0, 2, 20_000)
    s = rng.random(20_000) * 0.6 + 0.3 * y
    if decimals is not None:
        s = np.round(s, decimals)
    assert abs(roc_auc_score(y, s) - skm.roc_auc_score(y, s)) < TOL
