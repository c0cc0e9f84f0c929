"""Object detection and instance segmentation: COCO-exact AP/AR/mAP/mAR, PR curves.

Public API:

* :func:`evaluate_detection`: metric records in one call; :class:`DetectionEvaluator`:
  ``add()``/``merge()``/``compute()`` over batches, ``coco()`` for the COCOeval view.
* :func:`load_coco`, :func:`load_jsonl`, :func:`parse_datums`: read inputs into
  :class:`DetectionData` (which remembers the ``iou_type`` it was read for).
* :func:`compute_metrics`: Metric records (AP, APAveragedOverIOUs, mAP, mAPAveragedOverIOUs,
  AR, mAR, PrecisionRecallCurve, DetailedPrecisionRecallCurve, COCOSummary).
* :func:`coco_evaluate` + :class:`CocoParams`: COCOeval's precision/recall arrays and 12
  summary stats.
* geometry: :func:`box_iou`, :func:`box_iou_matrix`, :func:`raster_to_polygon`,
  :func:`mask_to_rle`, :func:`rle_to_mask` (the mask codec lives in :mod:`assay.io.masks`).

See ``docs/detection.md``.
"""

from __future__ import annotations

from assay._lazy import lazy_exports

# Names are loaded on first use (PEP 562), so importing ``assay.cli.detection`` for
# ``assay --help`` does not load numpy, pycocotools or shapely.
_EXPORTS = {
    "Annotations": "assay.detection.types",
    "CocoEvaluation": "assay.detection.compute",
    "CocoParams": "assay.detection.params",
    "DEFAULT_METRICS": "assay.detection.declared",
    "DetectionData": "assay.detection.types",
    "DetectionEvaluator": "assay.detection.evaluator",
    "METRICS": "assay.detection.declared",
    "METRIC_TYPES": "assay.detection.declared",
    "OPTIONS": "assay.detection.declared",
    "average_precision": "assay.detection.metrics",
    "box_iou": "assay.detection.geometry",
    "box_iou_matrix": "assay.detection.geometry",
    "coco_evaluate": "assay.detection.compute",
    "coco_summary": "assay.detection.metrics",
    "compute_metrics": "assay.detection.metrics",
    "evaluate_detection": "assay.detection.evaluator",
    "load_coco": "assay.detection.io",
    "load_jsonl": "assay.detection.jsonl",
    "mask_to_rle": "assay.io.masks",
    "parse_datums": "assay.detection.jsonl",
    "raster_to_polygon": "assay.detection.geometry",
    "rle_to_mask": "assay.io.masks",
}

__all__ = [
    "Annotations",
    "CocoEvaluation",
    "CocoParams",
    "DEFAULT_METRICS",
    "DetectionData",
    "DetectionEvaluator",
    "METRICS",
    "METRIC_TYPES",
    "OPTIONS",
    "average_precision",
    "box_iou",
    "box_iou_matrix",
    "coco_evaluate",
    "coco_summary",
    "compute_metrics",
    "evaluate_detection",
    "load_coco",
    "load_jsonl",
    "mask_to_rle",
    "parse_datums",
    "raster_to_polygon",
    "rle_to_mask",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
