"""What the segmentation domain declares once: its metric types (:data:`METRICS`) and the
options of :class:`~assay.segmentation.evaluator.SegmentationEvaluator` (:data:`OPTIONS`).

The evaluator, ``evaluate_segmentation``, the slices, the ``assay segmentation`` command
and the report read these; nothing else lists them. Light: no numpy (``--help`` reads it).

Example:
    >>> METRICS.sliced
    ('IOU', 'mIOU', 'Precision', 'Recall', 'F1', 'Accuracy')
    >>> OPTIONS.names
    ('zero_division', 'by', 'ci', 'ci_method', 'num_bootstrap', 'seed', 'cluster')
"""

from __future__ import annotations

from assay.metric_table import MetricEntry, MetricTable
from assay.options import ZERO_DIVISION, Options
from assay.uncertainty.options import by_option, interval_options

__all__ = ["METRICS", "OPTIONS"]

_RECORDS = "assay.segmentation.records"
_BOOT = ("bootstrap",)

#: The segmentation metric types, per label key, in the order they are emitted.
METRICS = MetricTable(
    "segmentation",
    MetricEntry(
        "IOU",
        "per_label",
        f"{_RECORDS}:per_label",
        True,
        _BOOT,
        help="Intersection over union of each label's pixels.",
    ),
    MetricEntry(
        "mIOU",
        "mean_iou",
        f"{_RECORDS}:mean_iou",
        True,
        _BOOT,
        help="Mean IOU over the labels where it is defined.",
    ),
    MetricEntry(
        "Precision",
        "per_label",
        f"{_RECORDS}:per_label",
        True,
        _BOOT,
        help="Each label's TP / (TP + FP) over pixels.",
    ),
    MetricEntry(
        "Recall",
        "per_label",
        f"{_RECORDS}:per_label",
        True,
        _BOOT,
        help="Each label's TP / (TP + FN) over pixels.",
    ),
    MetricEntry(
        "F1",
        "per_label",
        f"{_RECORDS}:per_label",
        True,
        _BOOT,
        help="Harmonic mean of each label's precision and recall.",
    ),
    MetricEntry(
        "Accuracy",
        "accuracy",
        f"{_RECORDS}:accuracy",
        True,
        _BOOT,
        help="Pixels whose predicted label is the true one (background included).",
    ),
    MetricEntry(
        "ConfusionMatrix",
        "confusion_matrix",
        f"{_RECORDS}:confusion_matrix",
        help="Pixel counts per (true, predicted) label, with valor-lite's IoU view.",
    ),
)

#: The options of ``SegmentationEvaluator`` (and of ``assay segmentation``).
OPTIONS = Options(
    ZERO_DIVISION,
    by_option("A datum metadata field", f"Sliced: {', '.join(METRICS.sliced)}."),
    interval_options(unit="datum"),
)
