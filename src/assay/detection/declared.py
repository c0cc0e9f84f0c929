"""What the detection domain declares once: its metric types (:data:`METRICS`) and the
options of :class:`~assay.detection.evaluator.DetectionEvaluator` (:data:`OPTIONS`).

:func:`~assay.detection.metrics.compute_metrics` takes the same options but ``by``
(:data:`METRIC_OPTIONS`); the evaluator, ``evaluate_detection``, the tallies, the
``assay detection`` command and the report read these, and nothing else lists them.
Light: no numpy (``assay detection --help`` reads it).

Example:
    >>> METRICS.sliced
    ('AP', 'APAveragedOverIOUs', 'mAP', 'mAPAveragedOverIOUs', 'AR', 'mAR')
    >>> METRICS.family("counts")
    ('Counts', 'Precision', 'Recall', 'F1', 'Accuracy')
    >>> OPTIONS.names[:3], OPTIONS.names[-1]
    (('iou_type', 'iou_thresholds', 'ar_iou_thresholds'), 'by')
    >>> METRIC_OPTIONS.validate({"iou_thresholds": [0.5, 1.5]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: iou_thresholds: IoU thresholds must be ..., got 1.5 (index 1)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from assay.errors import InvalidInputError
from assay.metric_table import MetricEntry, MetricTable
from assay.options import (
    EXAMPLES_PAGE,
    ZERO_DIVISION,
    Bad,
    Option,
    Options,
    Rule,
    choice,
    custom,
    number,
)
from assay.uncertainty.options import by_option, interval_options

__all__ = [
    "DEFAULT_METRICS",
    "IOU_TYPES",
    "MATCHINGS",
    "METRICS",
    "METRIC_OPTIONS",
    "METRIC_TYPES",
    "OPTIONS",
]

#: The IoU types: boxes, or region geometry (polygons and masks).
IOU_TYPES = ("bbox", "segm")
#: The matching rules of the thresholded metrics (:mod:`assay.detection.valor_match`).
MATCHINGS = ("coco", "valor")

_M = "assay.detection.metrics"
_T = "assay.detection.thresholded"
_BOOT = ("bootstrap",)


def _ap(name: str, help_: str) -> MetricEntry:
    return MetricEntry(name, "ap", f"{_M}:ap_records", True, _BOOT, help=help_)


def _counts(name: str, help_: str) -> MetricEntry:
    return MetricEntry(name, "counts", f"{_T}:thresholded_records", default=False, help=help_)


#: The detection metric types, in the order of the ``--metrics`` choices.
METRICS = MetricTable(
    "detection",
    _ap("AP", "101-point interpolated AP of one label at one IoU threshold."),
    _ap("APAveragedOverIOUs", "A label's AP averaged over the IoU thresholds (COCO's AP)."),
    _ap("mAP", "Mean AP over the labels of a label key, at one IoU threshold."),
    _ap("mAPAveragedOverIOUs", "mAP averaged over the IoU thresholds (COCO's AP@[.5:.95])."),
    MetricEntry(
        "AR",
        "ar",
        f"{_T}:ar_records",
        True,
        _BOOT,
        help="A label's recall averaged over the AR IoU thresholds, per score threshold.",
    ),
    MetricEntry(
        "mAR",
        "ar",
        f"{_T}:ar_records",
        True,
        _BOOT,
        help="Mean AR over the labels of a label key, per score threshold.",
    ),
    MetricEntry(
        "PrecisionRecallCurve",
        "pr_curves",
        "assay.detection.curves:pr_curves",
        help="Per label key: TP, FP, FN, precision, recall, F1 at every score threshold.",
    ),
    MetricEntry(
        "DetailedPrecisionRecallCurve",
        "pr_curves",
        "assay.detection.curves:pr_curves",
        default=False,
        help="The curve with its errors split by kind, with examples.",
    ),
    MetricEntry(
        "COCOSummary",
        "coco_summary",
        f"{_M}:coco_summary",
        default=False,
        help="COCOeval's 12 summary numbers (parameter statistic).",
    ),
    _counts("Counts", "TP, FP, FN per label, IoU threshold and score threshold."),
    _counts("Precision", "TP / (TP + FP) per label, IoU threshold and score threshold."),
    _counts("Recall", "TP / (TP + FN) per label, IoU threshold and score threshold."),
    _counts("F1", "2 TP / (2 TP + FP + FN) per label, IoU threshold and score threshold."),
    _counts("Accuracy", "TP / (TP + FP + FN) per label, IoU threshold and score threshold."),
    MetricEntry(
        "ARAveragedOverScores",
        "ar",
        f"{_T}:ar_records",
        default=False,
        help="A label's AR averaged over the score thresholds.",
    ),
    MetricEntry(
        "mARAveragedOverScores",
        "ar",
        f"{_T}:ar_records",
        default=False,
        help="Mean ARAveragedOverScores over the labels of a label key.",
    ),
    MetricEntry(
        "ConfusionMatrix",
        "confusion_matrix",
        "assay.detection.confusion:confusion_matrices",
        default=False,
        help="Counts per (ground-truth, predicted) label, with the unmatched ground truths "
        "and predictions.",
    ),
    MetricEntry(
        "InterpolatedPrecisionRecallCurve",
        "interpolated_curve",
        "assay.detection.interpolated:interpolated_pr_curves",
        default=False,
        help="A label's precision at COCO's 101 recall points, per IoU threshold.",
    ),
    MetricEntry(
        "ConfusionMatrixWithExamples",
        "confusion_with_examples",
        "assay.detection.examples:confusion_with_examples",
        default=False,
        help="The confusion matrix with the datums and annotations of each cell.",
    ),
    MetricEntry(
        "Examples",
        "examples",
        "assay.detection.examples:examples",
        default=False,
        help="Per datum: its TPs, FPs and FNs (paged by examples_limit/examples_offset).",
    ),
)

#: Every type (the ``--metrics`` choices) and those computed when none are named.
METRIC_TYPES = METRICS.types
DEFAULT_METRICS = METRICS.defaults

_IOU = "IoU thresholds must be numbers in [0, 1]"


def _number(v: Any) -> bool:
    return (
        type(v).__name__ not in ("bool", "bool_")
        and isinstance(v, numbers.Real)
        and math.isfinite(float(v))
    )


def _listed(v: Any, what: str) -> list[Any]:
    if isinstance(v, (str, bytes, Mapping)) or not hasattr(v, "__iter__"):
        raise Bad(f"must be a list of {what}, got {v!r}")
    got = list(v)
    if not got:
        raise Bad(f"needs at least one of {what}, got none")
    return got


def _one_iou(v: Any, where: str = "") -> float:
    if not _number(v) or not 0.0 <= float(v) <= 1.0:
        raise Bad(f"{_IOU}, got {v!r}{where}")
    return float(v)


def _iou_list(v: Any) -> tuple[float, ...] | None:
    if v is None:
        return None
    return tuple(_one_iou(x, f" (index {i})") for i, x in enumerate(_listed(v, "IoU thresholds")))


def _iou_thresholds(*, none: bool) -> Rule:
    """A non-empty list of IoU thresholds, each in [0, 1] (or ``None`` with ``none``)."""

    def normalize(v: Any) -> tuple[float, ...] | None:
        if v is None and not none:
            raise Bad(f"must be a list of numbers in [0, 1], got {v!r}")
        return _iou_list(v)

    return custom(
        "a list of numbers in [0, 1]", normalize, ("0.5", [1.5], []), cli_type=float, many=True
    )


def _scores(v: Any) -> tuple[float, ...] | None:
    if v is None:
        return None
    out = []
    for i, x in enumerate(_listed(v, "score thresholds")):
        if not _number(x):
            raise Bad(f"must be a finite number, got {x!r}", record=f"index {i}")
        out.append(float(x))
    return tuple(out)


def _one_source_of_scores(values: dict[str, Any]) -> dict[str, Any]:
    """``score_thresholds`` replaces ``recall_score_threshold``: both given is refused."""
    if values["score_thresholds"] is not None and values["recall_score_threshold"] != 0:
        raise InvalidInputError(
            "give score_thresholds or recall_score_threshold, not both", source="score_thresholds"
        )
    return values


_LISTS = "AR/mAR, ARAveragedOverScores, Counts, Precision, Recall, F1, Accuracy, ConfusionMatrix"

#: The options of :func:`~assay.detection.metrics.compute_metrics`: the evaluator's but ``by``.
METRIC_OPTIONS = Options(
    Option(
        "iou_type",
        None,
        choice(*IOU_TYPES, none=True, describe="bbox or segm"),
        "--iou-type",
        "bbox or segm (the API's default: the IoU type the data was read for).",
    ),
    Option(
        "iou_thresholds",
        None,
        _iou_thresholds(none=True),
        "--iou-thresholds",
        "IoU thresholds of AP, the Counts family and ConfusionMatrix, each in [0, 1] "
        "(comma-separated); default 0.5:0.05:0.95.",
        separator=",",
    ),
    Option(
        "ar_iou_thresholds",
        (0.5, 0.75),
        _iou_thresholds(none=False),
        "--ar-iou-thresholds",
        "IoU thresholds AR averages over (comma-separated).",
        separator=",",
    ),
    Option(
        "recall_score_threshold",
        0.0,
        number(),
        "--recall-score-threshold",
        "AR counts true positives scoring >= this.",
    ),
    Option(
        "score_thresholds",
        None,
        custom(
            "a list of finite numbers",
            _scores,
            ("0.5", ["x"], []),
            cli_type=float,
            many=True,
        ),
        "--score-thresholds",
        f"Comma-separated score thresholds of {_LISTS} (default: --recall-score-threshold).",
        separator=",",
    ),
    Option(
        "max_detections",
        100,
        number(1, integer=True, none=True, describe="an integer >= 1 (None keeps all)"),
        "--max-detections",
        "Detections kept per datum and label, highest scores first: N or 'all'.",
    ),
    Option(
        "pr_curve_iou_threshold",
        0.5,
        custom("an IoU threshold in [0, 1]", _one_iou, ("0.5", 1.5, True), cli_type=float),
        "--pr-curve-iou-threshold",
        "IoU threshold of the precision-recall curves.",
    ),
    Option(
        "pr_curve_max_examples",
        1,
        number(0, integer=True),
        "--pr-curve-max-examples",
        "Examples per DetailedPrecisionRecallCurve entry.",
    ),
    ZERO_DIVISION,
    Option(
        "matching",
        "coco",
        choice(*MATCHINGS),
        "--matching",
        "coco (default) or valor: valor-lite's matching rule (and its binned AP) for AP, AR "
        "and the Counts family.",
    ),
    EXAMPLES_PAGE,
    interval_options(unit="image"),
    check=_one_source_of_scores,
)

#: The options of ``DetectionEvaluator`` (and of ``assay detection``).
OPTIONS = Options(
    METRIC_OPTIONS,
    by_option("An image metadata field", f"Sliced: {', '.join(METRICS.sliced)}."),
)
