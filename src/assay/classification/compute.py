"""Pure numpy computation of classification metrics.

Two layers:

* scikit-learn-style functions (arrays in, number out) that raise
  :class:`~assay.errors.UndefinedMetricError` where a metric is not defined on the data
  (a ratio whose denominator is 0, a ROC AUC with one class), unless ``zero_division`` is
  given;
* array kernels on sorted scores (:func:`sorted_roc_auc`, :func:`sorted_threshold_counts`)
  used by :class:`~assay.classification.ClassificationEvaluator`.

Conventions: a score ``s`` is a positive prediction at threshold ``t`` when ``s >= t``; a
datum with no score for a label ranks below every given score of that label (``-inf``).
Every ratio goes through :mod:`assay.ratios`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay import ratios
from assay._compat import removed_keywords
from assay._validation import as_1d, check_binary, check_finite, check_same_length
from assay.errors import UndefinedMetricError
from assay.thresholds import PR_CURVE_SCORE_THRESHOLDS

__all__ = [
    "DEFAULT_PR_CURVE_THRESHOLDS",
    "accuracy_score",
    "precision_score",
    "recall_score",
    "f1_score",
    "roc_auc_score",
    "confusion_counts",
    "pr_curve_counts",
    "sorted_roc_auc",
    "sorted_threshold_counts",
]

#: The precision-recall curve grid 0.05, 0.10, ..., 0.95 (:mod:`assay.thresholds`).
DEFAULT_PR_CURVE_THRESHOLDS: tuple[float, ...] = PR_CURVE_SCORE_THRESHOLDS


# ---------------------------------------------------------------- binary metrics


def _binary(
    y_true: ArrayLike, y_pred: ArrayLike, positive_label: Any
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    t = as_1d(y_true, source="y_true")
    p = as_1d(y_pred, source="y_pred")
    check_same_length(y_true=t, y_pred=p)
    return t == positive_label, p == positive_label


def _ratio(
    hits: NDArray[np.bool_],
    base: NDArray[np.bool_],
    metric: str,
    requires: str,
    zero_division: float | None,
) -> float:
    num, den = int(np.count_nonzero(hits)), int(np.count_nonzero(base))
    return ratios.ratio(num, den, metric=metric, requires=requires, zero_division=zero_division)


def accuracy_score(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Fraction of predictions equal to the truth.

    In counts of one label against the rest, ``(TP + TN) / (TP + TN + FP + FN)``; for any
    number of labels, the number of positions where ``y_pred == y_true`` over the number of
    positions. Undefined (``UndefinedMetricError``) without data.

    Example:
        >>> accuracy_score(["a", "b", "b"], ["a", "b", "a"])
        0.6666666666666666
    """
    t = as_1d(y_true, source="y_true")
    p = as_1d(y_pred, source="y_pred")
    n = check_same_length(y_true=t, y_pred=p)
    return ratios.ratio(
        int(np.count_nonzero(t == p)), n, metric="Accuracy", requires="at least one data point"
    )


@removed_keywords(pos_label="positive_label")
def precision_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    positive_label: Any = 1,
    zero_division: float | None = None,
) -> float:
    """Binary precision ``TP / (TP + FP)`` of ``positive_label``.

    A prediction equal to ``positive_label`` is a positive prediction; it is a true
    positive when the truth is ``positive_label`` too. Undefined when nothing is predicted
    positive (TP + FP = 0), unless ``zero_division`` gives the value to use.

    Example:
        >>> precision_score([1, 0, 1, 1], [1, 1, 1, 0])
        0.6666666666666666
        >>> precision_score(["y", "n"], ["n", "n"], positive_label="y", zero_division=0)
        0.0
    """
    t, p = _binary(y_true, y_pred, positive_label)
    return _ratio(t & p, p, "Precision", "TP + FP > 0", zero_division)


@removed_keywords(pos_label="positive_label")
def recall_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    positive_label: Any = 1,
    zero_division: float | None = None,
) -> float:
    """Binary recall ``TP / (TP + FN)`` of ``positive_label``.

    The share of the true ``positive_label`` items predicted as ``positive_label``;
    undefined when the truth holds none (TP + FN = 0), unless ``zero_division`` is given.

    Example:
        >>> recall_score([1, 0, 1, 1], [1, 1, 1, 0])
        0.6666666666666666
    """
    t, p = _binary(y_true, y_pred, positive_label)
    return _ratio(t & p, t, "Recall", "TP + FN > 0", zero_division)


@removed_keywords(pos_label="positive_label")
def f1_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    positive_label: Any = 1,
    zero_division: float | None = None,
) -> float:
    """Binary F1, the harmonic mean of precision P and recall R: ``2PR / (P + R)``.

    In counts, ``2TP / (2TP + FP + FN)``. Undefined when P or R is; with ``zero_division``
    the count form is used and ``zero_division`` only when TP = FP = FN = 0.

    Example:
        >>> f1_score([1, 0, 1, 1], [1, 1, 1, 0])
        0.6666666666666666
    """
    t, p = _binary(y_true, y_pred, positive_label)
    tp, fp, fn = np.count_nonzero(t & p), np.count_nonzero(~t & p), np.count_nonzero(t & ~p)
    v = float(ratios.f1_from_counts(tp, fp, fn, zero_division))
    if np.isnan(v):
        missing = "precision (TP + FP > 0)" if tp + fp == 0 else "recall (TP + FN > 0)"
        raise UndefinedMetricError("F1", f"requires {missing} to be defined")
    return v


def confusion_counts(
    y_true: ArrayLike, y_pred: ArrayLike, *, labels: Sequence[Any] | None = None
) -> dict[Any, dict[str, int]]:
    """Per-label one-vs-rest counts ``{label: {"tp", "fp", "fn", "tn"}}``.

    For label ``c``: TP counts positions with truth and prediction ``c``, FP prediction
    ``c`` and another truth, FN truth ``c`` and another prediction, TN the rest.
    ``labels`` defaults to the sorted union of the values in ``y_true`` and ``y_pred``.

    Example:
        >>> confusion_counts(["a", "b", "b"], ["a", "b", "a"])["a"]
        {'tp': 1, 'fp': 1, 'fn': 0, 'tn': 1}
    """
    t = as_1d(y_true, source="y_true")
    p = as_1d(y_pred, source="y_pred")
    n = check_same_length(y_true=t, y_pred=p)
    labs = np.unique(np.concatenate([t, p])) if labels is None else np.asarray(labels)
    order = np.argsort(labs, kind="stable")
    sl = labs[order]

    def codes(a: NDArray[Any]) -> NDArray[np.int64]:
        i = np.clip(np.searchsorted(sl, a), 0, max(len(sl) - 1, 0))
        return np.where(sl[i] == a, order[i], -1) if len(sl) else np.full(len(a), -1)

    ct, cp = codes(t), codes(p)
    k = len(labs)
    tp = np.bincount(ct[(ct == cp) & (ct >= 0)], minlength=k)
    fp = np.bincount(cp[cp >= 0], minlength=k) - tp
    fn = np.bincount(ct[ct >= 0], minlength=k) - tp
    tn = n - tp - fp - fn
    return {
        (lab.item() if hasattr(lab, "item") else lab): {
            "tp": int(a),
            "fp": int(b),
            "fn": int(c),
            "tn": int(d),
        }
        for lab, a, b, c, d in zip(labs, tp, fp, fn, tn)
    }


# ---------------------------------------------------------------- ROC AUC and curves


def sorted_roc_auc(
    pos: NDArray[np.float64],
    neg: NDArray[np.float64],
    pos_w: NDArray[np.int64] | None = None,
    neg_w: NDArray[np.int64] | None = None,
) -> float:
    """ROC AUC from ascending-sorted positive and negative scores; NaN if either is empty.

    Equals the trapezoidal area under the ROC curve whose thresholds are the distinct
    scores in decreasing order (tied scores form one point, so a tie counts one half)::

        AUC = (#{(p, n): p > n} + 0.5 #{(p, n): p == n}) / (|pos| |neg|)

    ``pos_w`` / ``neg_w``: how many datums each score stands for (the compact form); the
    integer counts, hence the value, are those of the repeated scores.

    Example:
        >>> sorted_roc_auc(np.array([0.35, 0.8]), np.array([0.1, 0.4]))
        0.75
        >>> sorted_roc_auc(np.array([0.35, 0.8]), np.array([0.1, 0.4]), np.array([1, 2]),
        ...                np.array([1, 1]))
        0.8333333333333334
    """
    if pos_w is not None or neg_w is not None:
        return _weighted_roc_auc(pos, neg, _ones(pos, pos_w), _ones(neg, neg_w))
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    values, weight = pos, None
    repeats = np.count_nonzero(pos[1:] == pos[:-1])
    if repeats > len(pos) // 4:
        # Search each distinct positive score once, weighted by how often it occurs: the
        # same integer counts as searching every positive, in far fewer searches.
        starts = np.flatnonzero(np.concatenate(([True], pos[1:] != pos[:-1])))
        values, weight = pos[starts], np.diff(np.append(starts, len(pos)))
    below = np.searchsorted(neg, values, side="left")
    at_or_below = np.searchsorted(neg, values, side="right")
    if weight is None:
        wins = int(below.sum(dtype=np.int64))
        ties = int((at_or_below - below).sum(dtype=np.int64))
    else:
        wins = int((weight * below).sum(dtype=np.int64))
        ties = int((weight * (at_or_below - below)).sum(dtype=np.int64))
    return (wins + 0.5 * ties) / (len(pos) * len(neg))


def _ones(values: NDArray[Any], weights: NDArray[np.int64] | None) -> NDArray[np.int64]:
    return np.ones(len(values), dtype=np.int64) if weights is None else weights


def _cumulative(weights: NDArray[np.int64]) -> NDArray[np.int64]:
    """``c[i]``: the weight of the first ``i`` scores (``c[0] = 0``)."""
    return np.concatenate(([0], np.cumsum(weights, dtype=np.int64)))


def _weighted_roc_auc(
    pos: NDArray[np.float64],
    neg: NDArray[np.float64],
    pos_w: NDArray[np.int64],
    neg_w: NDArray[np.int64],
) -> float:
    n_pos, n_neg = int(pos_w.sum()), int(neg_w.sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    c = _cumulative(neg_w)
    below = c[np.searchsorted(neg, pos, side="left")]
    at_or_below = c[np.searchsorted(neg, pos, side="right")]
    wins = int((pos_w * below).sum(dtype=np.int64))
    ties = int((pos_w * (at_or_below - below)).sum(dtype=np.int64))
    return (wins + 0.5 * ties) / (n_pos * n_neg)


def sorted_threshold_counts(
    pos: NDArray[np.float64],
    neg: NDArray[np.float64],
    thresholds: NDArray[np.float64],
    pos_w: NDArray[np.int64] | None = None,
    neg_w: NDArray[np.int64] | None = None,
) -> NDArray[np.int64]:
    """Counts at each threshold from ascending-sorted scores.

    Returns an int array (len(thresholds), 4) of TP, FP, FN, TN: TP is the number of
    positive scores ``>= t``, FP the negative ones, FN and TN the rest. ``pos_w`` /
    ``neg_w``: how many datums each score stands for (the compact form).

    Example:
        >>> sorted_threshold_counts(np.array([0.6, 0.9]), np.array([0.2]), np.array([0.5])).tolist()
        [[2, 0, 0, 1]]
    """
    th = np.asarray(thresholds, dtype=np.float64)
    if pos_w is None and neg_w is None:
        tp = len(pos) - np.searchsorted(pos, th, side="left")
        fp = len(neg) - np.searchsorted(neg, th, side="left")
        return np.stack([tp, fp, len(pos) - tp, len(neg) - fp], axis=1).astype(np.int64)
    cp, cn = _cumulative(_ones(pos, pos_w)), _cumulative(_ones(neg, neg_w))
    tp = cp[-1] - cp[np.searchsorted(pos, th, side="left")]
    fp = cn[-1] - cn[np.searchsorted(neg, th, side="left")]
    return np.stack([tp, fp, cp[-1] - tp, cn[-1] - fp], axis=1).astype(np.int64)


def _split_sorted(
    y_true: ArrayLike, y_score: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    t = as_1d(y_true, source="y_true")
    s = check_finite(as_1d(y_score, source="y_score", dtype=np.float64), source="y_score")
    check_same_length(y_true=t, y_score=s)
    if t.dtype != np.bool_:
        t = check_binary(t, source="y_true").astype(bool)
    pos = s[t]
    pos.sort()
    neg = s[~t]
    neg.sort()
    return pos, neg


def roc_auc_score(y_true: ArrayLike, y_score: ArrayLike) -> float:
    """Binary ROC AUC: the area under the ROC curve, by the trapezoidal rule.

    The curve's points are (false positive rate, true positive rate) with the distinct
    scores as thresholds; the area equals the chance that a random positive scores above a
    random negative, ties counting one half (see :func:`sorted_roc_auc`). ``y_true`` holds
    0/1 or booleans. Undefined without both classes. Agrees with scikit-learn's
    ``roc_auc_score``, ties included.

    Example:
        >>> roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
        0.75
    """
    pos, neg = _split_sorted(y_true, y_score)
    if len(pos) == 0 or len(neg) == 0:
        raise UndefinedMetricError("ROCAUC", "requires both positive and negative ground truths")
    return sorted_roc_auc(pos, neg)


def pr_curve_counts(
    y_true: ArrayLike,
    y_score: ArrayLike,
    thresholds: Sequence[float] = PR_CURVE_SCORE_THRESHOLDS,
) -> dict[float, dict[str, int]]:
    """Binary TP/FP/FN/TN at each score threshold (a score ``>= t`` is a positive prediction).

    Example:
        >>> pr_curve_counts([0, 1, 1], [0.2, 0.6, 0.9], thresholds=[0.5])
        {0.5: {'tp': 2, 'fp': 0, 'fn': 0, 'tn': 1}}
    """
    pos, neg = _split_sorted(y_true, y_score)
    c = sorted_threshold_counts(pos, neg, np.asarray(thresholds, dtype=np.float64))
    return {
        float(t): dict(zip(("tp", "fp", "fn", "tn"), map(int, row)))
        for t, row in zip(thresholds, c)
    }
