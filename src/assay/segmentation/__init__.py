"""Semantic segmentation: per-label IoU, mIoU per label key, pixel confusion counts.

* :func:`confusion_counts`, :func:`iou_from_confusion`, :func:`mean_iou`, :func:`mask_iou`: pure numpy.
* :class:`SegmentationEvaluator`: streaming add()/merge()/compute() of confusion counts.
* :func:`label_maps`: JSONL records (masks, polygons, boxes) to label maps.

See ``docs/detection.md`` (section "Semantic segmentation").
"""

from assay.segmentation.compute import confusion_counts, iou_from_confusion, mask_iou, mean_iou
from assay.segmentation.evaluator import BACKGROUND, SegmentationEvaluator
from assay.segmentation.io import label_maps

__all__ = [
    "BACKGROUND",
    "SegmentationEvaluator",
    "confusion_counts",
    "iou_from_confusion",
    "label_maps",
    "mask_iou",
    "mean_iou",
]
