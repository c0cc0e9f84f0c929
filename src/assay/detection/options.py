"""The detection options, once checked (:data:`assay.detection.declared.METRIC_OPTIONS`),
as the arrays and counts the computation reads.

Example:
    >>> from assay.detection.declared import METRIC_OPTIONS
    >>> ious, ar_ious, scores = thresholds(METRIC_OPTIONS.validate({"iou_thresholds": [0.5]}))
    >>> ious.tolist(), ar_ious.tolist(), scores
    ([0.5], [0.5, 0.75], [0.0])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from assay.detection.params import COCO_IOU_THRESHOLDS
from assay.detection.types import DetectionData

__all__ = ["max_det", "thresholds"]


def thresholds(values: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """The IoU thresholds (COCO's 0.50:0.05:0.95 by default), the AR IoU thresholds and the
    score thresholds (default ``[recall_score_threshold]``) of clean option values."""
    given = values["iou_thresholds"]
    ious = np.array(COCO_IOU_THRESHOLDS if given is None else given, dtype=np.float64)
    ar_ious = np.array(values["ar_iou_thresholds"], dtype=np.float64)
    scores = values["score_thresholds"]
    return (
        ious,
        ar_ious,
        [float(values["recall_score_threshold"])] if scores is None else list(scores),
    )


def max_det(data: DetectionData, max_detections: int | None) -> int:
    """Detections kept per (datum, label): ``max_detections`` (checked by its rule), or all
    of them for None."""
    if max_detections is None:
        return max(1, len(data.predictions))
    return int(max_detections)
