"""Typed builders of classification metric records: each parameter name is spelled once.

Every builder takes the value (``None``, or NaN from a ratio kernel, when the metric is
undefined, with ``undefined=`` the reason) and the parameters the record is about, and
returns a :class:`~assay.results.Metric`.

Example:
    >>> precision(0.5, label_key="class", label_value="cat", score_threshold=0.5).to_dict()
    {'type': 'Precision', 'value': 0.5,
     'parameters': {'label_key': 'class', 'label_value': 'cat', 'score_threshold': 0.5}}
    >>> recall(float("nan"), label_key="class", label_value="dog", score_threshold=0.5,
    ...        undefined="requires TP + FN > 0").parameters["undefined"]
    'requires TP + FN > 0'
"""

from __future__ import annotations

from typing import Any

from assay.results import Metric, record
from assay.results import undefined as _undefined

__all__ = [
    "counts",
    "precision",
    "recall",
    "f1",
    "accuracy",
    "roc_auc",
    "mean_roc_auc",
    "pr_curve",
    "detailed_pr_curve",
    "PRECISION_REQUIRES",
    "RECALL_REQUIRES",
    "F1_REQUIRES",
]

PRECISION_REQUIRES = "requires TP + FP > 0"
RECALL_REQUIRES = "requires TP + FN > 0"
F1_REQUIRES = "requires precision and recall to be defined (TP + FP > 0 and TP + FN > 0)"
ROC_AUC_REQUIRES = "requires both positive and negative ground truths for this label"


def counts(
    value: dict[str, int], *, label_key: str, label_value: str, score_threshold: float
) -> Metric:
    """``Counts``: ``{"tp", "fp", "fn", "tn"}`` of one label value at one score threshold."""
    return Metric(
        "Counts",
        value,
        {"label_key": label_key, "label_value": label_value, "score_threshold": score_threshold},
    )


def precision(
    value: float | None,
    *,
    label_key: str,
    label_value: str,
    score_threshold: float,
    undefined: str = PRECISION_REQUIRES,
) -> Metric:
    """``Precision`` = TP / (TP + FP) of one label value at one score threshold."""
    return record(
        "Precision",
        value,
        undefined=undefined,
        label_key=label_key,
        label_value=label_value,
        score_threshold=score_threshold,
    )


def recall(
    value: float | None,
    *,
    label_key: str,
    label_value: str,
    score_threshold: float,
    undefined: str = RECALL_REQUIRES,
) -> Metric:
    """``Recall`` = TP / (TP + FN) of one label value at one score threshold."""
    return record(
        "Recall",
        value,
        undefined=undefined,
        label_key=label_key,
        label_value=label_value,
        score_threshold=score_threshold,
    )


def f1(
    value: float | None,
    *,
    label_key: str,
    label_value: str,
    score_threshold: float,
    undefined: str = F1_REQUIRES,
) -> Metric:
    """``F1`` = 2TP / (2TP + FP + FN) of one label value at one score threshold."""
    return record(
        "F1",
        value,
        undefined=undefined,
        label_key=label_key,
        label_value=label_value,
        score_threshold=score_threshold,
    )


def accuracy(value: float, *, label_key: str, score_threshold: float) -> Metric:
    """``Accuracy``: datums whose top prediction is right and passes the threshold, over all."""
    return Metric(
        "Accuracy", float(value), {"label_key": label_key, "score_threshold": score_threshold}
    )


def roc_auc(
    value: float | None, *, label_key: str, label_value: str, undefined: str = ROC_AUC_REQUIRES
) -> Metric:
    """``ROCAUC`` of one label value against the rest."""
    return record(
        "ROCAUC", value, undefined=undefined, label_key=label_key, label_value=label_value
    )


def mean_roc_auc(
    value: float | None, *, label_key: str, labels_excluded: list[str] | None = None
) -> Metric:
    """``mROCAUC``: the mean of the defined ROC AUCs of a key (``labels_excluded``: the rest)."""
    if value is None:
        return _undefined(
            "mROCAUC",
            "ROC AUC is undefined for every label (one class present)",
            label_key=label_key,
        )
    params: dict[str, Any] = {"label_key": label_key}
    if labels_excluded:
        params["labels_excluded"] = labels_excluded
    return Metric("mROCAUC", float(value), params)


def roc_curve(value: dict[str, Any], *, label_key: str) -> Metric:
    """``ROCCurve``: ``{label: {fpr, tpr, thresholds} | None}`` (None: one class only)."""
    return Metric("ROCCurve", value, {"label_key": label_key})


def pr_curve(value: dict[str, Any], *, label_key: str) -> Metric:
    """``PrecisionRecallCurve``: ``{label: {threshold: {tp, fp, fn, tn, precision, ...}}}``."""
    return Metric("PrecisionRecallCurve", value, {"label_key": label_key})


def detailed_pr_curve(
    value: dict[str, Any], *, label_key: str, pr_curve_max_examples: int
) -> Metric:
    """``DetailedPrecisionRecallCurve``: the curve's counts split by kind, with example uids."""
    return Metric(
        "DetailedPrecisionRecallCurve",
        value,
        {"label_key": label_key, "pr_curve_max_examples": pr_curve_max_examples},
    )
