"""Object detection and instance segmentation: COCO-exact AP/AR/mAP/mAR, PR curves.

Public API:

* :func:`evaluate_detection`: metric records in one call; :class:`DetectionEvaluator`:
  ``add()``/``merge()``/``compute()`` over batches, ``coco()`` for the COCOeval view.
* :func:`load_coco`, :func:`load_jsonl`, :func:`parse_datums`: read inputs into
  :class:`DetectionData` (which remembers the ``iou_type`` it was read for).
* :func:`compute_metrics`: Metric records (AP, APAveragedOverIOUs, mAP, mAPAveragedOverIOUs,
  AR, mAR, PrecisionRecallCurve, DetailedPrecisionRecallCurve, COCOSummary).
* :func:`coco_evaluate` + :class:`CocoParams`: COCOeval's precision/recall arrays and 12
  summary stats (``evaluate`` is its deprecated name).
* geometry: :func:`box_iou`, :func:`box_iou_matrix`, :func:`raster_to_polygon`,
  :func:`mask_to_rle`, :func:`rle_to_mask` (the mask codec lives in :mod:`assay.io.masks`).

See ``docs/detection.md``.
"""

from assay.detection.compute import CocoEvaluation, CocoParams, coco_evaluate, evaluate
from assay.detection.evaluator import DetectionEvaluator, evaluate_detection
from assay.detection.geometry import box_iou, box_iou_matrix, raster_to_polygon
from assay.detection.io import load_coco, load_jsonl, parse_datums
from assay.detection.metrics import (
    DEFAULT_METRICS,
    METRIC_TYPES,
    average_precision,
    coco_summary,
    compute_metrics,
)
from assay.detection.types import Annotations, DetectionData
from assay.io.masks import mask_to_rle, rle_to_mask

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
    "coco_evaluate",
    "coco_summary",
    "compute_metrics",
    "evaluate",
    "evaluate_detection",
    "load_coco",
    "load_jsonl",
    "mask_to_rle",
    "parse_datums",
    "raster_to_polygon",
    "rle_to_mask",
]
