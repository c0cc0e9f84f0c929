"""Pure numpy computation of classification metrics (spec: valor-metrics.md
"Classification Metrics", "Binary ROC AUC", "Precision-Recall Curves",
"DetailedPrecisionRecallCurve"; fairness-and-llm-suites.md "Accuracy", "Precision", "Recall").

Two layers:

* sklearn-style functions (arrays in, number out) that raise
  :class:`~assay.errors.UndefinedMetricError` where the spec says a metric "requires"
  something, unless ``zero_division`` is given;
* array kernels used by :class:`~assay.classification.ClassificationEvaluator`, which mark
  undefined entries with NaN internally (never emitted: the evaluator turns them into
  ``value=None`` records with a reason).

A score ``s`` is a positive prediction at threshold ``t`` when ``s >= t``. A datum with no
score for a label ranks below every given score for that label (``-inf``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.errors import InvalidInputError, UndefinedMetricError

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
    "ratio",
    "f1_from_counts",
]

#: Score thresholds of the PrecisionRecallCurve: 0.05, 0.10, ..., 0.95 (exact decimals).
DEFAULT_PR_CURVE_THRESHOLDS: tuple[float, ...] = tuple(round(0.05 * k, 2) for k in range(1, 20))


# ---------------------------------------------------------------- input checks


def _as_1d(x: ArrayLike, name: str) -> NDArray[Any]:
    a = np.asarray(x)
    if a.ndim != 1:
        raise InvalidInputError(f"expected a 1-D array, got shape {a.shape}", source=name)
    return a


def _check_same_length(**arrays: NDArray[Any]) -> int:
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise InvalidInputError(f"arrays differ in length: {desc}")
    return next(iter(lengths.values()))


def _check_scores(y_score: NDArray[Any], name: str = "y_score") -> NDArray[np.float64]:
    s = np.asarray(y_score, dtype=np.float64)
    bad = ~np.isfinite(s)
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        raise InvalidInputError(
            f"score must be a finite number, got {s.ravel()[i]!r}", source=name, record=i
        )
    return s


# ---------------------------------------------------------------- scalar helpers


def ratio(
    num: float, den: float, *, metric: str, requires: str, zero_division: float | None
) -> float:
    """``num / den``; if ``den == 0``: ``zero_division`` when given, else UndefinedMetricError.

    Example:
        >>> ratio(3, 4, metric="Precision", requires="TP + FP > 0", zero_division=None)
        0.75
    """
    if den > 0:
        return float(num) / float(den)
    if zero_division is not None:
        return float(zero_division)
    raise UndefinedMetricError(metric, f"requires {requires}")


def f1_from_counts(tp: float, fp: float, fn: float, *, zero_division: float | None = None) -> float:
    """F1 = 2PR / (P + R) = 2TP / (2TP + FP + FN).

    Requires precision (TP + FP > 0) and recall (TP + FN > 0) to be defined. With
    ``zero_division`` given, follows scikit-learn: ``2TP / (2TP + FP + FN)``, and
    ``zero_division`` only when TP = FP = FN = 0.

    Example:
        >>> f1_from_counts(3, 1, 1)
        0.75
    """
    if zero_division is None:
        if tp + fp == 0:
            raise UndefinedMetricError("F1", "requires precision to be defined (TP + FP > 0)")
        if tp + fn == 0:
            raise UndefinedMetricError("F1", "requires recall to be defined (TP + FN > 0)")
    den = int(2 * tp + fp + fn)
    return float(2 * tp) / den if den > 0 else float(zero_division)  # type: ignore[arg-type]


# ---------------------------------------------------------------- binary metrics


def _binary(
    y_true: ArrayLike, y_pred: ArrayLike, pos_label: Any
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    t = _as_1d(y_true, "y_true")
    p = _as_1d(y_pred, "y_pred")
    _check_same_length(y_true=t, y_pred=p)
    return t == pos_label, p == pos_label


def accuracy_score(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Fraction of predictions equal to the truth: (TP + TN) / (TP + TN + FP + FN).

    Requires at least one data point (UndefinedMetricError otherwise).

    Example:
        >>> accuracy_score(["a", "b", "b"], ["a", "b", "a"])
        0.6666666666666666
    """
    t = _as_1d(y_true, "y_true")
    p = _as_1d(y_pred, "y_pred")
    n = _check_same_length(y_true=t, y_pred=p)
    if n == 0:
        raise UndefinedMetricError("Accuracy", "requires at least one data point")
    return float(np.count_nonzero(t == p)) / n


def precision_score(
    y_true: ArrayLike, y_pred: ArrayLike, *, pos_label: Any = 1, zero_division: float | None = None
) -> float:
    """Binary precision TP / (TP + FP) for ``pos_label``. Requires TP + FP > 0.

    Example:
        >>> precision_score([1, 0, 1, 1], [1, 1, 1, 0])
        0.6666666666666666
    """
    t, p = _binary(y_true, y_pred, pos_label)
    tp = np.count_nonzero(t & p)
    return ratio(
        tp,
        np.count_nonzero(p),
        metric="Precision",
        requires="TP + FP > 0",
        zero_division=zero_division,
    )


def recall_score(
    y_true: ArrayLike, y_pred: ArrayLike, *, pos_label: Any = 1, zero_division: float | None = None
) -> float:
    """Binary recall TP / (TP + FN) for ``pos_label``. Requires TP + FN > 0.

    Example:
        >>> recall_score([1, 0, 1, 1], [1, 1, 1, 0])
        0.6666666666666666
    """
    t, p = _binary(y_true, y_pred, pos_label)
    tp = np.count_nonzero(t & p)
    return ratio(
        tp,
        np.count_nonzero(t),
        metric="Recall",
        requires="TP + FN > 0",
        zero_division=zero_division,
    )


def f1_score(
    y_true: ArrayLike, y_pred: ArrayLike, *, pos_label: Any = 1, zero_division: float | None = None
) -> float:
    """Binary F1 = 2PR / (P + R) for ``pos_label`` (see :func:`f1_from_counts`).

    Example:
        >>> f1_score([1, 0, 1, 1], [1, 1, 1, 0])
        0.6666666666666666
    """
    t, p = _binary(y_true, y_pred, pos_label)
    tp = np.count_nonzero(t & p)
    return f1_from_counts(
        tp, np.count_nonzero(~t & p), np.count_nonzero(t & ~p), zero_division=zero_division
    )


def confusion_counts(
    y_true: ArrayLike, y_pred: ArrayLike, *, labels: Sequence[Any] | None = None
) -> dict[Any, dict[str, int]]:
    """Per-label one-vs-rest counts ``{label: {"tp", "fp", "fn", "tn"}}``.

    ``labels`` defaults to the sorted union of the values in ``y_true`` and ``y_pred``.

    Example:
        >>> confusion_counts(["a", "b", "b"], ["a", "b", "a"])["a"]
        {'tp': 1, 'fp': 1, 'fn': 0, 'tn': 1}
    """
    t = _as_1d(y_true, "y_true")
    p = _as_1d(y_pred, "y_pred")
    n = _check_same_length(y_true=t, y_pred=p)
    labs = np.unique(np.concatenate([t, p])) if labels is None else np.asarray(labels)
    # Map both arrays onto label codes in one pass each.
    order = np.argsort(labs, kind="stable")
    sl = labs[order]

    def codes(a: NDArray[Any]) -> NDArray[np.int64]:
        i = np.searchsorted(sl, a)
        i = np.clip(i, 0, len(sl) - 1)
        found = sl[i] == a
        return np.where(found, order[i], -1)

    ct, cp = codes(t), codes(p)
    k = len(labs)
    hit = ct == cp
    tp = np.bincount(ct[hit & (ct >= 0)], minlength=k)
    pred = np.bincount(cp[cp >= 0], minlength=k)
    true = np.bincount(ct[ct >= 0], minlength=k)
    fp, fn = pred - tp, true - tp
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


def sorted_roc_auc(pos: NDArray[np.float64], neg: NDArray[np.float64]) -> float:
    """ROC AUC from ascending-sorted positive and negative scores; NaN if either is empty.

    Equals the trapezoidal area under the ROC curve whose thresholds are the distinct
    scores in decreasing order (tied scores form one point, so ties count one half):
    ``(#{(p, n): p > n} + 0.5 #{(p, n): p == n}) / (|pos| |neg|)``.
    """
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    below = np.searchsorted(neg, pos, side="left")
    at_or_below = np.searchsorted(neg, pos, side="right")
    wins = int(below.sum(dtype=np.int64))
    ties = int((at_or_below - below).sum(dtype=np.int64))
    return (wins + 0.5 * ties) / (len(pos) * len(neg))


def sorted_threshold_counts(
    pos: NDArray[np.float64], neg: NDArray[np.float64], thresholds: NDArray[np.float64]
) -> NDArray[np.int64]:
    """Counts at each threshold from ascending-sorted scores: array (len(thresholds), 4) of TP, FP, FN, TN."""
    th = np.asarray(thresholds, dtype=np.float64)
    tp = len(pos) - np.searchsorted(pos, th, side="left")
    fp = len(neg) - np.searchsorted(neg, th, side="left")
    return np.stack([tp, fp, len(pos) - tp, len(neg) - fp], axis=1).astype(np.int64)


def _split_sorted(
    y_true: ArrayLike, y_score: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    t = _as_1d(y_true, "y_true")
    s = _check_scores(_as_1d(y_score, "y_score"))
    _check_same_length(y_true=t, y_score=s)
    if t.dtype != np.bool_:
        uniq = np.unique(t)
        if not np.isin(uniq, [0, 1]).all():
            raise InvalidInputError(
                f"binary y_true must hold 0/1 or booleans, got values {uniq[:5].tolist()}",
                source="y_true",
            )
        t = t.astype(bool)
    pos = np.sort(s[t])
    neg = np.sort(s[~t])
    return pos, neg


def roc_auc_score(y_true: ArrayLike, y_score: ArrayLike) -> float:
    """Binary ROC AUC (trapezoidal rule over the distinct scores; spec "Binary ROC AUC").

    Requires both positives and negatives in ``y_true`` (UndefinedMetricError otherwise).
    Agrees with ``sklearn.metrics.roc_auc_score`` including tied scores.

    Example:
        >>> roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
        0.75
    """
    pos, neg = _split_sorted(y_true, y_score)
    if len(pos) == 0 or len(neg) == 0:
        raise UndefinedMetricError("ROCAUC", "requires both positive and negative ground truths")
    return sorted_roc_auc(pos, neg)


def pr_curve_counts(
    y_true: ArrayLike, y_score: ArrayLike, thresholds: Sequence[float] = DEFAULT_PR_CURVE_THRESHOLDS
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
