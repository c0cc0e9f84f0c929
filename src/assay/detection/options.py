"""Validation of the detection metric options (one place, shared by the API and evaluator).

Example:
    >>> check_score_thresholds([0, 0.5])
    [0.0, 0.5]
    >>> check_matching("hungarian")
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: matching: must be one of ['coco', 'valor'], got 'hungarian'
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from assay._validation import check_thresholds
from assay.detection.params import COCO_IOU_THRESHOLDS
from assay.detection.thresholded import THRESHOLDED_TYPES
from assay.detection.types import DetectionData
from assay.detection.valor_match import MATCHINGS
from assay.errors import InvalidInputError

__all__ = [
    "METRIC_TYPES",
    "DEFAULT_METRICS",
    "AR_TYPES",
    "check_options",
    "check_matching",
    "check_score_thresholds",
    "max_det",
]

METRIC_TYPES = (
    "AP",
    "APAveragedOverIOUs",
    "mAP",
    "mAPAveragedOverIOUs",
    "AR",
    "mAR",
    "PrecisionRecallCurve",
    "DetailedPrecisionRecallCurve",
    "COCOSummary",
    *THRESHOLDED_TYPES,
    "ARAveragedOverScores",
    "mARAveragedOverScores",
    "ConfusionMatrix",
    "InterpolatedPrecisionRecallCurve",
    "ConfusionMatrixWithExamples",
    "Examples",
)
DEFAULT_METRICS = METRIC_TYPES[:7]
AR_TYPES = ("AR", "mAR", "ARAveragedOverScores", "mARAveragedOverScores")


def max_det(data: DetectionData, max_detections: int | None) -> int:
    """Detections kept per (datum, label): ``max_detections``, or all of them for None."""
    if max_detections is None:
        return max(1, len(data.predictions))
    if isinstance(max_detections, bool) or not isinstance(max_detections, (int, np.integer)):
        raise InvalidInputError(
            f"must be an integer or None, got {max_detections!r}", source="max_detections"
        )
    if max_detections < 1:
        raise InvalidInputError(
            f"must be >= 1 (None keeps every detection), got {max_detections}",
            source="max_detections",
        )
    return int(max_detections)


def check_options(
    *,
    iou_thresholds: Sequence[float] | None,
    ar_iou_thresholds: Sequence[float],
    recall_score_threshold: float,
    pr_curve_iou_threshold: float,
    pr_curve_max_examples: int,
    zero_division: float | None,
    metrics: Sequence[str] | None,
    score_thresholds: Sequence[float] | None = None,
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Validate compute_metrics' options; returns the IoU thresholds, AR thresholds and metrics."""
    wanted = list(DEFAULT_METRICS if metrics is None else metrics)
    unknown = [m for m in wanted if m not in METRIC_TYPES]
    if unknown:
        raise InvalidInputError(
            f"unknown metric type(s) {unknown}; choose from {list(METRIC_TYPES)}", source="metrics"
        )
    ious = check_thresholds(
        COCO_IOU_THRESHOLDS if iou_thresholds is None else iou_thresholds, source="iou_thresholds"
    )
    ar_ious = check_thresholds(ar_iou_thresholds, source="ar_iou_thresholds")
    check_thresholds([pr_curve_iou_threshold], source="pr_curve_iou_threshold")
    for name, v in (
        ("recall_score_threshold", recall_score_threshold),
        ("zero_division", zero_division),
    ):
        if v is not None and (
            isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
        ):
            raise InvalidInputError(f"must be a finite number, got {v!r}", source=name)
    check_score_thresholds(score_thresholds, recall_score_threshold)
    if (
        isinstance(pr_curve_max_examples, bool)
        or not isinstance(pr_curve_max_examples, int)
        or pr_curve_max_examples < 0
    ):
        raise InvalidInputError(
            f"must be an integer >= 0, got {pr_curve_max_examples!r}",
            source="pr_curve_max_examples",
        )
    return ious, ar_ious, wanted


def check_matching(matching: object) -> str:
    """``matching`` if it is ``"coco"`` or ``"valor"``."""
    if matching not in MATCHINGS:
        raise InvalidInputError(
            f"must be one of {list(MATCHINGS)}, got {matching!r}", source="matching"
        )
    return str(matching)


def check_score_thresholds(
    score_thresholds: Sequence[float] | None, recall_score_threshold: float = 0.0
) -> list[float]:
    """The score thresholds (default ``[recall_score_threshold]``): finite numbers, non-empty."""
    if score_thresholds is None:
        return [float(recall_score_threshold)]
    if isinstance(score_thresholds, (str, bytes)) or not isinstance(score_thresholds, Sequence):
        raise InvalidInputError(
            f"must be a list of numbers, got {score_thresholds!r}", source="score_thresholds"
        )
    out = []
    for i, v in enumerate(score_thresholds):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise InvalidInputError(
                f"index {i}: must be a finite number, got {v!r}", source="score_thresholds"
            )
        out.append(float(v))
    if not out:
        raise InvalidInputError("must not be empty", source="score_thresholds")
    if recall_score_threshold not in (0, 0.0):
        raise InvalidInputError(
            "give score_thresholds or recall_score_threshold, not both", source="score_thresholds"
        )
    return out
