"""Semantic segmentation: per-label IoU, precision, recall, F1, mIoU, pixel confusion counts.

* :func:`evaluate_segmentation`: records in one call; :class:`SegmentationEvaluator`:
  streaming ``add()``/``merge()``/``compute()`` of confusion counts (the evaluator contract).
* :func:`pixel_confusion`, :func:`iou_from_confusion`, :func:`prf_from_confusion`,
  :func:`mean_iou`, :func:`mask_iou`: pure numpy (``confusion_counts`` is the deprecated
  name of ``pixel_confusion``).
* :func:`label_maps`: JSONL records (masks, polygons, boxes) to label maps.

See ``docs/segmentation.md``.
"""

from assay.segmentation.compute import (
    confusion_counts,
    iou_from_confusion,
    mask_iou,
    mean_iou,
    pixel_confusion,
    prf_from_confusion,
)
from assay.segmentation.evaluator import (
    BACKGROUND,
    METRIC_TYPES,
    SegmentationEvaluator,
    evaluate_segmentation,
)
from assay.segmentation.io import label_maps

__all__ = [
    "BACKGROUND",
    "METRIC_TYPES",
    "SegmentationEvaluator",
    "confusion_counts",
    "evaluate_segmentation",
    "iou_from_confusion",
    "label_maps",
    "mask_iou",
    "mean_iou",
    "pixel_confusion",
    "prf_from_confusion",
]
