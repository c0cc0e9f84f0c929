"""Invariants of the classification metrics (hypothesis)."""

import numpy as np
import polars as pl
from classkit import make_multiclass
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from assay.classification import ClassificationEvaluator, evaluate_classification, roc_auc_score

scores = arrays(np.float64, st.integers(2, 80), elements=st.floats(0, 1).map(lambda x: round(x, 1)))


@settings(max_examples=100, deadline=None)
@given(s=scores, seed=st.integers(0, 1000))
def test_roc_auc_bounds_and_label_flip_symmetry(s, seed):
    y = np.random.default_rng(seed).integers(0, 2, len(s))
    assume(y.min() != y.max())
    auc = roc_auc_score(y, s)
    assert 0.0 <= auc <= 1.0
    assert abs(roc_auc_score(1 - y, s) - (1 - auc)) < 1e-12  # swapping classes mirrors the curve
    assert abs(roc_auc_score(y, 1 - s) - (1 - auc)) < 1e-12  # so does reversing the ranking


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 80), seed=st.integers(0, 10_000))
def test_permuting_datums_changes_nothing_but_example_order(n, seed):
    labels, y, p = make_multiclass(n, 4, seed, decimals=1)
    perm = np.random.default_rng(seed).permutation(n)
    opts = dict(
        score_thresholds=(0.0, 0.5),
        metrics=[
            m
            for m in (
                "Counts",
                "Precision",
                "Recall",
                "F1",
                "Accuracy",
                "ROCAUC",
                "mROCAUC",
                "PrecisionRecallCurve",
            )
        ],
    )
    a = ClassificationEvaluator(**opts).add_arrays(y, p, labels=labels).compute()
    b = (
        ClassificationEvaluator(**opts)
        .add_arrays(y[perm], p[perm], labels=labels, uids=perm)
        .compute()
    )
    assert a.to_json() == b.to_json()
    for m in a:
        if (
            m.type in ("Precision", "Recall", "F1", "Accuracy", "ROCAUC", "mROCAUC")
            and m.value is not None
        ):
            assert 0.0 <= m.value <= 1.0


def test_polars_frames_are_accepted():
    gts = pl.DataFrame({"uid": ["a", "b"], "value": ["x", "y"]})
    pds = pl.DataFrame({"uid": ["a", "b"], "value": ["x", "x"], "score": [0.9, 0.4]})
    ms = evaluate_classification(gts, pds)
    assert ms.get("Accuracy", score_threshold=0.0).value == 0.5
