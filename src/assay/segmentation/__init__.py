"""Semantic segmentation: per-label IoU, precision, recall, F1, mIoU, pixel confusion counts.

* :func:`evaluate_segmentation`: records in one call; :class:`SegmentationEvaluator`:
  streaming ``add()``/``merge()``/``compute()`` of confusion counts (the evaluator contract).
* :func:`pixel_confusion`, :func:`iou_from_confusion`, :func:`prf_from_confusion`,
  :func:`mean_iou`, :func:`mask_iou`: pure numpy.
* :func:`label_maps`: JSONL records (masks, polygons, boxes) to label maps.

See ``docs/segmentation.md``.
"""

from __future__ import annotations

from assay._lazy import lazy_exports

# Names are loaded on first use (PEP 562), so importing ``assay.cli.segmentation`` for
# ``assay --help`` does not load numpy, pycocotools or shapely.
_EXPORTS = {
    "BACKGROUND": "assay.segmentation.evaluator",
    "METRICS": "assay.segmentation.declared",
    "OPTIONS": "assay.segmentation.declared",
    "SegmentationEvaluator": "assay.segmentation.evaluator",
    "evaluate_segmentation": "assay.segmentation.evaluator",
    "iou_from_confusion": "assay.segmentation.compute",
    "label_maps": "assay.segmentation.io",
    "mask_iou": "assay.segmentation.compute",
    "mean_iou": "assay.segmentation.compute",
    "pixel_confusion": "assay.segmentation.compute",
    "prf_from_confusion": "assay.segmentation.compute",
}

__all__ = [
    "BACKGROUND",
    "METRICS",
    "OPTIONS",
    "SegmentationEvaluator",
    "evaluate_segmentation",
    "iou_from_confusion",
    "label_maps",
    "mask_iou",
    "mean_iou",
    "pixel_confusion",
    "prf_from_confusion",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
