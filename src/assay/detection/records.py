"""Typed builders of detection metric records: each parameter name is spelled once here.

The names follow ``docs/records.md``: ``label_key``, ``label_value``, ``iou_threshold``,
``iou_thresholds``, ``score_threshold``, ``zero_division``. A value of ``None`` makes an
undefined record (``value=None``, the reason in ``parameters["undefined"]``).

Example:
    >>> ap(0.5, label_key="class", label_value="cat", iou_threshold=0.5).parameters
    {'label_key': 'class', 'label_value': 'cat', 'iou_threshold': 0.5}
    >>> ap(None, label_key="class", label_value="dog", iou_threshold=0.5).parameters["undefined"]
    'requires at least one ground truth (not crowd) of the label'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from assay.results import Metric, record

__all__ = [
    "NO_GT",
    "NO_LABEL",
    "threshold",
    "ap",
    "ap_averaged",
    "mean_ap",
    "mean_ap_averaged",
    "ar",
    "mean_ar",
    "pr_curve",
    "detailed_pr_curve",
    "coco_summary_stat",
    "counts",
    "ratio_at",
    "ar_averaged_over_scores",
    "mean_ar_averaged_over_scores",
    "confusion_matrix",
    "interpolated_pr_curve",
]

NO_GT = "requires at least one ground truth (not crowd) of the label"
NO_LABEL = "requires a label with ground truths"


def threshold(t: float) -> float:
    """A threshold as reported in records: rounded to 10 decimals (0.55, not 0.5500000001)."""
    return round(float(t), 10)


def _zd(params: dict[str, Any], zero_division: float | None) -> dict[str, Any]:
    return params if zero_division is None else {**params, "zero_division": zero_division}


def ap(
    value: float | None,
    *,
    label_key: str,
    label_value: str,
    iou_threshold: float,
    zero_division: float | None = None,
) -> Metric:
    """``AP``: 101-point interpolated average precision of one label at one IoU threshold."""
    p = {
        "label_key": label_key,
        "label_value": label_value,
        "iou_threshold": threshold(iou_threshold),
    }
    return record("AP", value, undefined=NO_GT, **_zd(p, zero_division))


def ap_averaged(
    value: float | None,
    *,
    label_key: str,
    label_value: str,
    iou_thresholds: Iterable[float],
    zero_division: float | None = None,
) -> Metric:
    """``APAveragedOverIOUs``: the mean of a label's AP over the IoU thresholds."""
    p = {
        "label_key": label_key,
        "label_value": label_value,
        "iou_thresholds": [threshold(t) for t in iou_thresholds],
    }
    return record("APAveragedOverIOUs", value, undefined=NO_GT, **_zd(p, zero_division))


def mean_ap(
    value: float | None, *, label_key: str, iou_threshold: float, zero_division: float | None = None
) -> Metric:
    """``mAP``: the mean AP over the labels of a label key at one IoU threshold."""
    p = {"label_key": label_key, "iou_threshold": threshold(iou_threshold)}
    return record("mAP", value, undefined=NO_LABEL, **_zd(p, zero_division))


def mean_ap_averaged(
    value: float | None,
    *,
    label_key: str,
    iou_thresholds: Iterable[float],
    zero_division: float | None = None,
) -> Metric:
    """``mAPAveragedOverIOUs``: the mean of mAP over the IoU thresholds."""
    p = {"label_key": label_key, "iou_thresholds": [threshold(t) for t in iou_thresholds]}
    return record("mAPAveragedOverIOUs", value, undefined=NO_LABEL, **_zd(p, zero_division))


def ar(
    value: float | None,
    *,
    label_key: str,
    label_value: str,
    iou_thresholds: Iterable[float],
    score_threshold: float,
    zero_division: float | None = None,
) -> Metric:
    """``AR``: a label's recall averaged over IoU thresholds, counting TPs scoring >= the
    score threshold."""
    p = {
        "label_key": label_key,
        "label_value": label_value,
        "iou_thresholds": [threshold(t) for t in iou_thresholds],
        "score_threshold": float(score_threshold),
    }
    return record("AR", value, undefined=NO_GT, **_zd(p, zero_division))


def mean_ar(
    value: float | None,
    *,
    label_key: str,
    iou_thresholds: Iterable[float],
    score_threshold: float,
    zero_division: float | None = None,
) -> Metric:
    """``mAR``: the mean AR over the labels of a label key."""
    p = {
        "label_key": label_key,
        "iou_thresholds": [threshold(t) for t in iou_thresholds],
        "score_threshold": float(score_threshold),
    }
    return record("mAR", value, undefined=NO_LABEL, **_zd(p, zero_division))


def pr_curve(
    value: dict[str, Any],
    *,
    label_key: str,
    iou_threshold: float,
    zero_division: float | None = None,
) -> Metric:
    """``PrecisionRecallCurve``: ``{label_value: {score_threshold: counts and ratios}}``."""
    p = {"label_key": label_key, "iou_threshold": threshold(iou_threshold)}
    return Metric("PrecisionRecallCurve", value, _zd(p, zero_division))


def detailed_pr_curve(
    value: dict[str, Any], *, label_key: str, iou_threshold: float, max_examples: int
) -> Metric:
    """``DetailedPrecisionRecallCurve``: the curve's counts split by kind, with examples."""
    p = {
        "label_key": label_key,
        "iou_threshold": threshold(iou_threshold),
        "pr_curve_max_examples": int(max_examples),
    }
    return Metric("DetailedPrecisionRecallCurve", value, p)


def coco_summary_stat(
    value: float | None, *, statistic: str, iou: str, area: str, max_dets: int, iou_type: str
) -> Metric:
    """``COCOSummary``: one of COCOeval's 12 summary numbers (undefined where COCO prints -1)."""
    p = {
        "statistic": statistic,
        "iou": iou,
        "area": area,
        "max_dets": max_dets,
        "iou_type": iou_type,
    }
    return record("COCOSummary", value, undefined=NO_GT, **p)


RATIO_REASONS = {
    "Precision": "requires a prediction of the label scoring >= the score threshold (TP + FP > 0)",
    "Recall": "requires at least one ground truth (not crowd) of the label (TP + FN > 0)",
    "F1": "requires both precision and recall to be defined",
    "Accuracy": "requires a prediction or a ground truth of the label (TP + FP + FN > 0)",
}


def _at_thresholds(
    label_key: str, label_value: str, iou_threshold: float, score_threshold: float
) -> dict[str, Any]:
    return {
        "label_key": label_key,
        "label_value": label_value,
        "iou_threshold": threshold(iou_threshold),
        "score_threshold": float(score_threshold),
    }


def counts(
    tp: int,
    fp: int,
    fn: int,
    *,
    label_key: str,
    label_value: str,
    iou_threshold: float,
    score_threshold: float,
) -> Metric:
    """``Counts``: ``{tp, fp, fn}`` of one label at one IoU and one score threshold."""
    p = _at_thresholds(label_key, label_value, iou_threshold, score_threshold)
    return Metric("Counts", {"tp": int(tp), "fp": int(fp), "fn": int(fn)}, p)


def ratio_at(
    type_: str,
    value: float | None,
    *,
    label_key: str,
    label_value: str,
    iou_threshold: float,
    score_threshold: float,
    zero_division: float | None = None,
) -> Metric:
    """``Precision``, ``Recall``, ``F1`` or ``Accuracy`` of one label at one (IoU, score)."""
    p = _at_thresholds(label_key, label_value, iou_threshold, score_threshold)
    return record(type_, value, undefined=RATIO_REASONS[type_], **_zd(p, zero_division))


def ar_averaged_over_scores(
    value: float | None,
    *,
    label_key: str,
    label_value: str,
    iou_thresholds: Iterable[float],
    score_thresholds: Iterable[float],
    zero_division: float | None = None,
) -> Metric:
    """``ARAveragedOverScores``: a label's AR averaged over the score thresholds."""
    p = {
        "label_key": label_key,
        "label_value": label_value,
        "iou_thresholds": [threshold(t) for t in iou_thresholds],
        "score_thresholds": [float(s) for s in score_thresholds],
    }
    return record("ARAveragedOverScores", value, undefined=NO_GT, **_zd(p, zero_division))


def mean_ar_averaged_over_scores(
    value: float | None,
    *,
    label_key: str,
    iou_thresholds: Iterable[float],
    score_thresholds: Iterable[float],
    zero_division: float | None = None,
) -> Metric:
    """``mARAveragedOverScores``: mAR averaged over the score thresholds."""
    p = {
        "label_key": label_key,
        "iou_thresholds": [threshold(t) for t in iou_thresholds],
        "score_thresholds": [float(s) for s in score_thresholds],
    }
    return record("mARAveragedOverScores", value, undefined=NO_LABEL, **_zd(p, zero_division))


def confusion_matrix(
    value: dict[str, Any], *, label_key: str, iou_threshold: float, score_threshold: float
) -> Metric:
    """``ConfusionMatrix``: ``{confusion_matrix, unmatched_predictions,
    unmatched_ground_truths}`` of a label key at one (IoU, score) threshold pair."""
    p = {
        "label_key": label_key,
        "iou_threshold": threshold(iou_threshold),
        "score_threshold": float(score_threshold),
    }
    return Metric("ConfusionMatrix", value, p)


def interpolated_pr_curve(
    value: dict[str, Any] | None, *, label_key: str, label_value: str, iou_threshold: float
) -> Metric:
    """``InterpolatedPrecisionRecallCurve``: ``{precisions, scores}`` at 101 recall points."""
    p = {
        "label_key": label_key,
        "label_value": label_value,
        "iou_threshold": threshold(iou_threshold),
    }
    return record("InterpolatedPrecisionRecallCurve", value, undefined=NO_GT, **p)
