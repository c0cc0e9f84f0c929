"""Typed builders of semantic-segmentation metric records: each parameter name is spelled
once here.

Parameters follow ``docs/records.md``: ``label_key``, ``label_value`` and, when given,
``zero_division``. A value of ``None`` makes an undefined record (``value=None``, the reason
in ``parameters["undefined"]``).

Example:
    >>> per_label("IOU", 0.5, label_key="class", label_value="road").parameters
    {'label_key': 'class', 'label_value': 'road'}
    >>> per_label("Precision", None, label_key="class", label_value="sky").parameters["undefined"]
    'requires a pixel predicted as the label (TP + FP > 0)'
    >>> mean_iou(None, label_key="class").value is None
    True
"""

from __future__ import annotations

from typing import Any

from assay.results import Metric, record

__all__ = ["PER_LABEL_TYPES", "per_label", "mean_iou", "accuracy", "confusion_matrix"]

_NO_PIXEL = "requires the label in a ground truth or prediction"

#: Per-label record types and why each is undefined when its denominator is 0.
PER_LABEL_TYPES: dict[str, str] = {
    "IOU": _NO_PIXEL,
    "Precision": "requires a pixel predicted as the label (TP + FP > 0)",
    "Recall": "requires a ground-truth pixel of the label (TP + FN > 0)",
    "F1": "requires both precision and recall to be defined",
}


def _params(label_key: str, zero_division: float | None, **extra: Any) -> dict[str, Any]:
    zd = {} if zero_division is None else {"zero_division": zero_division}
    return {"label_key": label_key, **extra, **zd}


def per_label(
    type_: str,
    value: float | None,
    *,
    label_key: str,
    label_value: str,
    zero_division: float | None = None,
) -> Metric:
    """``IOU``, ``Precision``, ``Recall`` or ``F1`` of one label."""
    params = _params(label_key, zero_division, label_value=label_value)
    return record(type_, value, undefined=PER_LABEL_TYPES[type_], **params)


def mean_iou(value: float | None, *, label_key: str, zero_division: float | None = None) -> Metric:
    """``mIOU``: the mean IoU over the labels whose IoU is defined."""
    reason = "requires a label present in the ground truths or predictions"
    return record("mIOU", value, undefined=reason, **_params(label_key, zero_division))


def accuracy(value: float | None, *, label_key: str, zero_division: float | None = None) -> Metric:
    """``Accuracy``: pixels whose class (background included) is right, over all pixels."""
    return record(
        "Accuracy",
        value,
        undefined="requires at least one pixel",
        **_params(label_key, zero_division),
    )


def confusion_matrix(
    value: dict[str, Any], *, label_key: str, zero_division: float | None = None
) -> Metric:
    """``ConfusionMatrix``: pixel counts plus valor-lite's IoU per cell and unmatched ratios."""
    return Metric("ConfusionMatrix", value, _params(label_key, zero_division))
