"""COCO evaluation parameters: IoU and recall thresholds, area ranges, detections kept.

The defaults are COCOeval's: IoU thresholds 0.50, 0.55, ..., 0.95; 101 recall points
0, 0.01, ..., 1; the area ranges all / small (< 32^2) / medium / large (> 96^2); and at
most 1, 10 or 100 detections per (datum, label).

Example:
    >>> p = CocoParams(iou_thresholds=[0.5])
    >>> p.iou_thresholds.tolist(), p.max_dets
    ([0.5], (1, 10, 100))
    >>> CocoParams(iou_thresholds=[1.5])
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: iou_thresholds: index 0: must be in [0, 1], got 1.5
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assay._validation import check_thresholds
from assay.detection.declared import IOU_TYPES
from assay.errors import InvalidInputError

__all__ = [
    "COCO_IOU_THRESHOLDS",
    "COCO_RECALL_THRESHOLDS",
    "COCO_AREA_RANGES",
    "COCO_MAX_DETS",
    "STAT_NAMES",
    "CocoParams",
    "check_iou_type",
]


def check_iou_type(iou_type: Any) -> str:
    """``iou_type`` if it is ``"bbox"`` or ``"segm"``."""
    if iou_type not in IOU_TYPES:
        raise InvalidInputError(f"must be 'bbox' or 'segm', got {iou_type!r}", source="iou_type")
    return str(iou_type)


COCO_IOU_THRESHOLDS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
COCO_RECALL_THRESHOLDS = np.linspace(
    0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True
)
COCO_AREA_RANGES: tuple[tuple[str, float, float], ...] = (
    ("all", 0.0, 1e5**2),
    ("small", 0.0, 32.0**2),
    ("medium", 32.0**2, 96.0**2),
    ("large", 96.0**2, 1e5**2),
)
COCO_MAX_DETS: tuple[int, ...] = (1, 10, 100)

# (AP or AR, iou label, area, max dets) of the 12 classic COCO summary numbers
STAT_NAMES: tuple[tuple[str, str, str, int], ...] = (
    ("AP", "0.50:0.95", "all", 100),
    ("AP", "0.50", "all", 100),
    ("AP", "0.75", "all", 100),
    ("AP", "0.50:0.95", "small", 100),
    ("AP", "0.50:0.95", "medium", 100),
    ("AP", "0.50:0.95", "large", 100),
    ("AR", "0.50:0.95", "all", 1),
    ("AR", "0.50:0.95", "all", 10),
    ("AR", "0.50:0.95", "all", 100),
    ("AR", "0.50:0.95", "small", 100),
    ("AR", "0.50:0.95", "medium", 100),
    ("AR", "0.50:0.95", "large", 100),
)


@dataclass
class CocoParams:
    """Evaluation parameters, COCOeval's defaults unless given.

    Attributes:
        iou_type: ``"bbox"`` (boxes) or ``"segm"`` (region geometry).
        iou_thresholds: IoU thresholds ``T`` (default 0.50:0.05:0.95).
        recall_thresholds: the 101 recall points of the interpolated precision.
        area_ranges: ``(name, lo, hi)``; a ground truth with area outside ``[lo, hi]`` is ignored.
        max_dets: detections kept per (datum, label), ascending; matching uses the last.
    """

    iou_type: str = "bbox"
    iou_thresholds: np.ndarray = field(default_factory=lambda: COCO_IOU_THRESHOLDS.copy())
    recall_thresholds: np.ndarray = field(default_factory=lambda: COCO_RECALL_THRESHOLDS.copy())
    area_ranges: tuple[tuple[str, float, float], ...] = COCO_AREA_RANGES
    max_dets: tuple[int, ...] = COCO_MAX_DETS

    def __post_init__(self) -> None:
        check_iou_type(self.iou_type)
        self.iou_thresholds = check_thresholds(self.iou_thresholds, source="iou_thresholds")
        self.recall_thresholds = np.asarray(self.recall_thresholds, dtype=np.float64)
        self.max_dets = tuple(sorted(int(m) for m in self.max_dets))
        if not self.max_dets or self.max_dets[0] < 1:
            raise InvalidInputError("must be positive integers", source="max_dets")
        self.area_ranges = tuple((str(n), float(lo), float(hi)) for n, lo, hi in self.area_ranges)
