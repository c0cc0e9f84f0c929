"""Counts and ratios at any IoU thresholds and any list of score thresholds.

With detections matched as COCO does at IoU threshold ``t`` (:mod:`assay.detection.match`,
area range all, ``max_detections`` per (datum, label)) and a score threshold ``s``, per label::

    TP = matched detections scoring >= s       FP = unmatched detections scoring >= s
    FN = ground truths (not crowd) - TP
    Precision = TP / (TP + FP)     Recall = TP / (TP + FN)     F1 = 2TP / (2TP + FP + FN)
    Accuracy  = TP / (TP + FP + FN)        (detection has no true negatives)
    AR(s)     = mean over the AR IoU thresholds of Recall
    ARAveragedOverScores  = mean of AR(s) over the score thresholds
    mARAveragedOverScores = mean of ARAveragedOverScores over the labels of a key

A detection matched to a crowd region is neither TP nor FP. Ratios go through
:mod:`assay.ratios` (0 / 0 is undefined, or ``zero_division``).

Example:
    >>> from assay.detection.jsonl import parse_datums
    >>> from assay.detection.match import match
    >>> from assay.detection.params import CocoParams
    >>> box = {"label": "cat", "box": [0, 0, 10, 10]}
    >>> data = parse_datums([{"uid": "a", "annotations": [box]}],
    ...                     [{"uid": "a", "annotations": [{**box, "score": 0.7}]}])
    >>> m = match(data, CocoParams(iou_thresholds=[0.5], area_ranges=(("all", 0, 1e10),),
    ...                            max_dets=(100,)))
    >>> tp, fp, fn = threshold_counts(data, m, [0], [0.0, 0.8])
    >>> tp[0, :, 0].tolist(), fn[0, :, 0].tolist()
    ([1, 0], [0, 1])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.detection import records
from assay.detection.match import Matching
from assay.detection.types import DetectionData
from assay.ratios import divide, precision_recall_f1, value_or_none
from assay.results import Metric

__all__ = ["threshold_counts", "thresholded_records", "ar_records"]


def threshold_counts(
    data: DetectionData, m: Matching, t_index: Sequence[int], score_thresholds: Sequence[float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TP, FP and FN ``(T, S, K)`` at the matching's thresholds ``t_index`` and each score.

    Every detection falls in the bin of the score thresholds it reaches; a reverse cumulative
    sum over the sorted thresholds then gives, at each threshold, the detections scoring
    ``>=`` it (all score thresholds at once, ties and repeats included).
    """
    dts, gts = data.predictions, data.groundtruths
    K, S = len(data.labels), len(score_thresholds)
    ths = np.asarray(score_thresholds, dtype=np.float64)
    order = np.argsort(ths, kind="stable")
    lab = dts.label[m.det]
    bins = np.searchsorted(ths[order], dts.score[m.det], side="right")  # thresholds reached
    key = bins * K + lab
    npig = np.bincount(gts.label[~m.gt_ignore[0]], minlength=K)
    tp = np.zeros((len(t_index), S, K), dtype=np.int64)
    fp = np.zeros_like(tp)
    for i, ti in enumerate(t_index):
        counted = ~m.dt_ignore[0, ti]
        for out, mask in ((tp, m.dtm[0, ti] & counted), (fp, ~m.dtm[0, ti] & counted)):
            hist = np.bincount(key[mask], minlength=(S + 1) * K).reshape(S + 1, K)
            out[i, order] = np.cumsum(hist[::-1], axis=0)[::-1][1:]
    return tp, fp, npig[None, None, :] - tp


def thresholded_records(
    data: DetectionData,
    counts: tuple[np.ndarray, np.ndarray, np.ndarray],
    ious: np.ndarray,
    score_thresholds: Sequence[float],
    order: list[int],
    wanted: list[str],
    zd: float | None,
) -> list[Metric]:
    """``Counts``, ``Precision``, ``Recall``, ``F1``, ``Accuracy`` records (those wanted) per
    label, IoU threshold and score threshold, labels in ``order``."""
    tp, fp, fn = counts
    precision, recall, f1 = precision_recall_f1(tp, fp, fn, zd)
    ratios = {
        "Precision": precision,
        "Recall": recall,
        "F1": f1,
        "Accuracy": divide(tp, tp + fp + fn, zd),
    }
    out: list[Metric] = []
    for k in order:
        key, value = data.labels[k]
        for ti, t in enumerate(ious):
            for si, s in enumerate(score_thresholds):
                at = dict(label_key=key, label_value=value, iou_threshold=t, score_threshold=s)
                if "Counts" in wanted:
                    out.append(records.counts(tp[ti, si, k], fp[ti, si, k], fn[ti, si, k], **at))
                out += [
                    records.ratio_at(name, value_or_none(arr[ti, si, k]), zero_division=zd, **at)
                    for name, arr in ratios.items()
                    if name in wanted
                ]
    return out


def ar_records(
    data: DetectionData,
    tp: np.ndarray,
    fn: np.ndarray,
    ar_ious: np.ndarray,
    score_thresholds: Sequence[float],
    order: list[int],
    keys: list[str],
    wanted: list[str],
    zd: float | None,
) -> list[Metric]:
    """``AR``/``mAR`` per score threshold and their averages over the score thresholds.

    ``tp``, ``fn``: ``(T, S, K)`` at the AR IoU thresholds. A label without ground truths has
    undefined AR (left out of the means) unless ``zero_division`` is given.
    """
    recall = divide(tp, tp + fn, zd)  # (T, S, K)
    ar = np.mean(recall, axis=0)  # (S, K)
    ar_avg = np.mean(ar, axis=0)  # (K,)
    out: list[Metric] = []
    for si, s in enumerate(score_thresholds):
        if "AR" in wanted:
            for k in order:
                key, value = data.labels[k]
                out.append(
                    records.ar(
                        value_or_none(ar[si, k]),
                        label_key=key,
                        label_value=value,
                        iou_thresholds=ar_ious,
                        score_threshold=s,
                        zero_division=zd,
                    )
                )
        if "mAR" in wanted:
            for key in keys:
                ks = [k for k in order if data.labels[k][0] == key and not np.isnan(ar[si, k])]
                out.append(
                    records.mean_ar(
                        float(np.mean(ar[si, ks])) if ks else None,
                        label_key=key,
                        iou_thresholds=ar_ious,
                        score_threshold=s,
                        zero_division=zd,
                    )
                )
    common: dict[str, Any] = dict(
        iou_thresholds=ar_ious, score_thresholds=score_thresholds, zero_division=zd
    )
    if "ARAveragedOverScores" in wanted:
        for k in order:
            key, value = data.labels[k]
            out.append(
                records.ar_averaged_over_scores(
                    value_or_none(ar_avg[k]), label_key=key, label_value=value, **common
                )
            )
    if "mARAveragedOverScores" in wanted:
        for key in keys:
            ks = [k for k in order if data.labels[k][0] == key and not np.isnan(ar_avg[k])]
            v = float(np.mean(ar[:, ks].mean(axis=1))) if ks else None
            out.append(records.mean_ar_averaged_over_scores(v, label_key=key, **common))
    return out
