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
    >>> from assay.detection.jsonl import parse_datums
    >>> from assay.detection.params import CocoParams
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
from assay.detection.match import Matching
from assay.detection.params import CocoParams
from assay.detection.types import DetectionData
from assay.detection.valor_match import matching_for
from assay.results import Metric

__all__ = ["interpolated_pr_curves", "binned_curves"]


def _bins(
    lab: np.ndarray, is_tp: np.ndarray, scores: np.ndarray, n_gt: np.ndarray, K: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(precisions, scores)``, ``(K, 101)``, of detections sorted by label (ascending), then
    by descending score: one pass for every label (see the module docstring)."""
    start = np.searchsorted(lab, np.arange(K))  # first position of each label
    pos = np.arange(len(lab))
    cum = np.cumsum(is_tp)
    before = np.r_[0, cum][start]  # true positives of the earlier labels
    tp = cum - before[lab]
    rank = pos - start[lab] + 1
    n = n_gt[lab]
    precision = np.where(is_tp, tp / rank, 0.0)
    recall = np.where(is_tp & (n > 0), tp / np.maximum(n, 1), 0.0)
    cell = lab * 101 + np.floor(recall * 100).astype(np.int64)
    flat_p = np.zeros(K * 101)
    flat_s = np.zeros(K * 101)
    np.maximum.at(flat_p, cell, precision)
    np.maximum.at(flat_s, cell, scores)
    best_p, best_s = flat_p.reshape(K, 101), flat_s.reshape(K, 101)
    return (
        np.maximum.accumulate(best_p[:, ::-1], axis=1)[:, ::-1],
        np.maximum.accumulate(best_s[:, ::-1], axis=1)[:, ::-1],
    )


def binned_curves(data: DetectionData, m: Matching) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """valor-lite's binned curves of every label at every threshold of the matching ``m``:
    ``(precisions, scores, n_gt)`` with the first two ``(T, K, 101)`` and ``n_gt`` the
    labels' ground truths that are not crowd regions. The mean of ``precisions`` over the
    last axis is valor-lite's AP (meaningful where ``n_gt > 0``)."""
    dts, gts = data.predictions, data.groundtruths
    K = len(data.labels)
    lab = dts.label[m.det]  # accumulation order: by label, then descending score
    score = dts.score[m.det]
    npig = np.bincount(gts.label[~m.gt_ignore[0]], minlength=K)
    prec = np.zeros((m.n_thresholds, K, 101))
    sc = np.zeros_like(prec)
    for ti in range(m.n_thresholds):
        sel = ~m.dt_ignore[0, ti]
        prec[ti], sc[ti] = _bins(lab[sel], m.dtm[0, ti][sel], score[sel], npig, K)
    return prec, sc, npig


def interpolated_pr_curves(
    data: DetectionData,
    params: CocoParams,
    order: list[int],
    zero_division: float | None = None,
    matching: str = "coco",
) -> list[Metric]:
    """One ``InterpolatedPrecisionRecallCurve`` record per (label, IoU threshold)."""
    prec, sc, npig = binned_curves(data, matching_for(matching, data, params))
    out: list[Metric] = []
    for k in order:
        key, value = data.labels[k]
        for ti, t in enumerate(params.iou_thresholds):
            at: dict[str, Any] = dict(label_key=key, label_value=value, iou_threshold=float(t))
            if npig[k] == 0 and zero_division is None:
                out.append(records.interpolated_pr_curve(None, **at))
                continue
            p = prec[ti, k] if npig[k] else np.full(101, float(zero_division or 0.0))
            curve = {"precisions": p.tolist(), "scores": sc[ti, k].tolist()}
            out.append(records.interpolated_pr_curve(curve, **at))
    return out
