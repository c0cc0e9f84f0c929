"""valor-lite's 101-point precision-recall curve: ``InterpolatedPrecisionRecallCurve``.

At each IoU threshold, for each label, detections are matched as COCO does and taken in
descending score order (:mod:`assay.detection.match`; detections matched to a crowd region
are skipped). At the ``i``-th detection of the label (``i`` counting from 1) that is a true
positive, with ``tp`` the true positives so far and ``n`` the label's ground truths::

    precision = tp / i        recall = tp / n        bin = floor(100 * recall)

A false positive has precision and recall 0 (bin 0). Each of the 101 recall bins keeps the
largest precision and the largest score that fell in it; then both are replaced by their
maximum over the bins at and above it (right to left). ``precisions[r]`` is the best
precision at recall ``r / 100`` or more, ``scores[r]`` the highest score reaching it.
This is valor-lite's binned curve; its mean is valor-lite's AP, which can differ from
COCO's (``AP``) by up to about 1e-2 (COCO reads precision at the first detection reaching
each recall point). A label without ground truths has an undefined curve, or, with
``zero_division``, precisions equal to it and the scores as above.

Example:
    >>> from assay.detection.io import parse_datums
    >>> from assay.detection.compute import CocoParams
    >>> box = {"label": "cat", "box": [0, 0, 10, 10]}
    >>> data = parse_datums([{"uid": "a", "annotations": [box]}],
    ...                     [{"uid": "a", "annotations": [{**box, "score": 0.7}]}])
    >>> (rec,) = interpolated_pr_curves(data, CocoParams(iou_thresholds=[0.5],
    ...     area_ranges=(("all", 0, 1e10),), max_dets=(100,)), [0])
    >>> rec.value["precisions"][100], rec.value["scores"][0]
    (1.0, 0.7)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from assay.detection import records
from assay.detection.params import CocoParams
from assay.detection.types import DetectionData
from assay.detection.valor_match import matching_for
from assay.results import Metric

__all__ = ["interpolated_pr_curves", "binned_curve"]


def binned_curve(is_tp: np.ndarray, scores: np.ndarray, n_gt: int) -> tuple[np.ndarray, np.ndarray]:
    """``(precisions, scores)`` at the 101 recall points from one label's detections in
    descending score order (``is_tp`` per detection)."""
    cum = np.cumsum(is_tp)
    rank = np.arange(1, len(is_tp) + 1)
    precision = np.where(is_tp, cum / np.maximum(rank, 1), 0.0)
    recall = np.where(is_tp, cum / n_gt, 0.0) if n_gt else np.zeros(len(is_tp))
    bins = np.floor(recall * 100).astype(np.int64)
    best_p = np.zeros(101)
    best_s = np.zeros(101)
    np.maximum.at(best_p, bins, precision)
    np.maximum.at(best_s, bins, scores)
    return (
        np.maximum.accumulate(best_p[::-1])[::-1],
        np.maximum.accumulate(best_s[::-1])[::-1],
    )


def interpolated_pr_curves(
    data: DetectionData,
    params: CocoParams,
    order: list[int],
    zero_division: float | None = None,
    matching: str = "coco",
) -> list[Metric]:
    """One ``InterpolatedPrecisionRecallCurve`` record per (label, IoU threshold)."""
    m = matching_for(matching, data, params)
    dts, gts = data.predictions, data.groundtruths
    K = len(data.labels)
    lab = dts.label[m.det]
    score = dts.score[m.det]
    npig = np.bincount(gts.label[~m.gt_ignore[0]], minlength=K)
    out: list[Metric] = []
    for k in order:
        key, value = data.labels[k]
        for ti, t in enumerate(params.iou_thresholds):
            sel = (lab == k) & ~m.dt_ignore[0, ti]
            at: dict[str, Any] = dict(label_key=key, label_value=value, iou_threshold=float(t))
            if npig[k] == 0 and zero_division is None:
                out.append(records.interpolated_pr_curve(None, **at))
                continue
            prec, sc = binned_curve(m.dtm[0, ti][sel], score[sel], int(npig[k]))
            if npig[k] == 0:
                prec = np.full(101, float(zero_division or 0.0))
            curve = {"precisions": prec.tolist(), "scores": sc.tolist()}
            out.append(records.interpolated_pr_curve(curve, **at))
    return out
