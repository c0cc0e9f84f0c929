"""Object detection and instance segmentation: COCO-exact AP/AR/mAP/mAR, PR curves.

Public API:

* :func:`load_coco`, :func:`load_jsonl`, :func:`parse_datums`: read inputs into :class:`DetectionData`.
* :func:`compute_metrics`: Metric records (AP, APAveragedOverIOUs, mAP, mAPAveragedOverIOUs, AR,
  mAR, PrecisionRecallCurve, DetailedPrecisionRecallCurve, COCOSummary).
* :func:`evaluate` + :class:`CocoParams`: COCOeval's precision/recall arrays and 12 summary stats.
* :class:`DetectionEvaluator`: add()/merge()/compute() over batches.
* geometry: :func:`box_iou`, :func:`box_iou_matrix`, :func:`raster_to_polygon`, :func:`mask_to_rle`,
  :func:`rle_to_mask` (COCO RLE in and out through pycocotools).

See ``docs/detection.md``.
"""

from assay.detection.compute import CocoEvaluation, CocoParams, evaluate
from assay.detection.evaluator import DetectionEvaluator
from assay.detection.geometry import (
    box_iou,
    box_iou_matrix,
    mask_to_rle,
    raster_to_polygon,
    rle_to_mask,
)
from assay.detection.io import load_coco, load_jsonl, parse_datums
from assay.detection.metrics import (
    DEFAULT_METRICS,
    METRIC_TYPES,
    average_precision,
    coco_summary,
    compute_metrics,
)
from assay.detection.types import Annotations, DetectionData

__all__ = [
    "Annotations",
    "CocoEvaluation",
    "CocoParams",
    "DEFAULT_METRICS",
    "DetectionData",
    "DetectionEvaluator",
    "METRIC_TYPES",
    "average_precision",
    "box_iou",
    "box_iou_matrix",
    "coco_summary",
    "compute_metrics",
    "evaluate",
    "load_coco",
    "load_jsonl",
    "mask_to_rle",
    "parse_datums",
    "raster_to_polygon",
    "rle_to_mask",
]
