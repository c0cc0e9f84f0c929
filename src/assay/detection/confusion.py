"""Detection confusion matrices (valor-lite's ``ConfusionMatrix``), in bounded memory.

Per label key, every prediction is paired with every ground truth of the same datum and key
whose IoU is above ``1e-9``, whatever their labels. The pairs are taken greedily, once, in
order of descending score, then descending IoU (then datum, prediction and ground-truth
order): a pair is *chosen* when neither its prediction nor its ground truth was chosen
before. At an IoU threshold ``t`` and a score threshold ``s`` a chosen pair counts when its
IoU is ``>= t`` and its score ``>= s``; then::

    confusion_matrix[g][p]     = counted pairs of a ground truth labelled g and a prediction p
    unmatched_ground_truths[g] = ground truths of label g in no counted pair
    unmatched_predictions[p]   = predictions of label p scoring >= s in no counted pair

so ``sum over p of confusion_matrix[g][p] + unmatched_ground_truths[g]`` is the number of
ground truths of label ``g``. Crowd regions are left out. Every prediction counts
(``max_detections`` does not apply). The greedy choice is made in *rounds*: a pair that comes
first (in the order above) among the remaining pairs of both its prediction and its ground
truth is chosen by the greedy pass, so each round takes all such pairs at once and drops the
pairs they block; datums are handled in chunks, so memory grows with the chunk, not the data.

Example:
    >>> from assay.detection.jsonl import parse_datums
    >>> gt = [{"uid": "a", "annotations": [{"label": "cat", "box": [0, 0, 10, 10]}]}]
    >>> pr = [{"uid": "a", "annotations": [{"label": "dog", "score": 0.9, "box": [0, 0, 10, 9]}]}]
    >>> (rec,) = confusion_matrices(parse_datums(gt, pr), "bbox", [0.5], [0.5])
    >>> rec.value["confusion_matrix"]["cat"], rec.value["unmatched_predictions"]
    ({'cat': 0, 'dog': 1}, {'cat': 0, 'dog': 0})
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from assay.detection import records
from assay.detection.geometry import box_iou, segm_iou
from assay.detection.types import DetectionData
from assay.io.labels import natural_key
from assay.results import Metric

__all__ = ["EPSILON", "greedy_pairs", "datum_pairs", "confusion_counts", "confusion_matrices"]

_MAX_ROUNDS = 64  # vectorised rounds before the plain sequential pass takes over

#: IoUs and scores at or below this are no overlap / no prediction (valor-lite's epsilon).
EPSILON = 1e-9


def greedy_pairs(pd: np.ndarray, gt: np.ndarray, n_pd: int, n_gt: int) -> np.ndarray:
    """Mask of the pairs a greedy one-to-one pass in the given order chooses.

    ``pd``, ``gt``: node ids of each pair, pairs already in priority order. Rounds as in the
    module docstring; after ``_MAX_ROUNDS`` of them the rest goes through the sequential pass
    (the pairs still live are exactly those no chosen pair blocks, in order).

    Example:
        >>> greedy_pairs(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), 2, 2).tolist()
        [True, False, False, True]
    """
    chosen = np.zeros(len(pd), dtype=bool)
    live = np.arange(len(pd))
    first_pd = np.empty(n_pd, dtype=np.int64)
    first_gt = np.empty(n_gt, dtype=np.int64)
    for _ in range(_MAX_ROUNDS):
        if not len(live):
            return chosen
        p, g = pd[live], gt[live]
        pos = np.arange(len(live))
        first_pd[p[::-1]] = pos[::-1]  # the last write wins: each node's first pair
        first_gt[g[::-1]] = pos[::-1]
        win = (first_pd[p] == pos) & (first_gt[g] == pos)
        chosen[live[win]] = True
        used_pd = np.zeros(n_pd, dtype=bool)
        used_gt = np.zeros(n_gt, dtype=bool)
        used_pd[p[win]] = True
        used_gt[g[win]] = True
        live = live[~(used_pd[p] | used_gt[g])]
    # a long chain of blocked pairs (rare): finish the remaining pairs one by one
    seen_pd, seen_gt = set(pd[chosen].tolist()), set(gt[chosen].tolist())
    for i, p1, g1 in zip(live.tolist(), pd[live].tolist(), gt[live].tolist()):
        if p1 not in seen_pd and g1 not in seen_gt:
            chosen[i] = True
            seen_pd.add(p1)
            seen_gt.add(g1)
    return chosen


def datum_pairs(
    data: DetectionData, iou_type: str, datums: np.ndarray, key_of: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(prediction rows, ground-truth rows, IoU)`` of the overlapping same-key pairs of
    ``datums`` (a contiguous range; IoU > :data:`EPSILON`; crowd ground truths left out)."""
    gts, dts = data.groundtruths, data.predictions
    lo_d, hi_d = int(datums[0]), int(datums[-1])  # a contiguous range of datums
    g_rows = np.flatnonzero((gts.datum >= lo_d) & (gts.datum <= hi_d) & ~gts.crowd)
    d_rows = np.flatnonzero((dts.datum >= lo_d) & (dts.datum <= hi_d))
    g_rows = g_rows[np.argsort(gts.datum[g_rows], kind="stable")]
    gd = gts.datum[g_rows]
    lo = np.searchsorted(gd, dts.datum[d_rows], "left")
    cnt = np.searchsorted(gd, dts.datum[d_rows], "right") - lo
    pd = np.repeat(d_rows, cnt)
    off = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    pg = g_rows[np.repeat(lo, cnt) + off]
    same = key_of[dts.label[pd]] == key_of[gts.label[pg]]
    pd, pg = pd[same], pg[same]
    if iou_type == "bbox":
        iou = box_iou(dts.box[pd], gts.box[pg], np.zeros(len(pg), bool))
    else:
        iou = segm_iou(dts, gts, pd, pg) if len(pg) else np.zeros(0)
    keep = iou > EPSILON
    return pd[keep], pg[keep], iou[keep]


def chosen_pairs(
    data: DetectionData, iou_type: str, *, chunk: int = 500
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(prediction rows, ground-truth rows, IoU)`` of the pairs the greedy pass chooses,
    datums taken ``chunk`` at a time (pairs never span datums, so the choice is the same)."""
    dts = data.predictions
    keys = sorted({k for k, _ in data.labels})
    key_of = np.array([keys.index(k) for k, _ in data.labels], dtype=np.int64)
    parts = []
    for start in range(0, data.n_datums, chunk):
        datums = np.arange(start, min(start + chunk, data.n_datums))
        pd, pg, iou = datum_pairs(data, iou_type, datums, key_of)
        order = np.lexsort((pg, pd, dts.datum[pd], -iou, -dts.score[pd]))
        pd, pg, iou = pd[order], pg[order], iou[order]
        win = greedy_pairs(pd, pg, len(dts), len(data.groundtruths))
        parts.append((pd[win], pg[win], iou[win]))
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    return tuple(np.concatenate(x) for x in zip(*parts))  # type: ignore[return-value]


def counted(data: DetectionData, iou: np.ndarray, pd: np.ndarray, t: float, s: float) -> np.ndarray:
    """Which chosen pairs count at IoU threshold ``t`` and score threshold ``s``."""
    score = data.predictions.score[pd]
    return (iou >= t) & (score >= s) & (score > EPSILON)


def live_predictions(data: DetectionData, s: float) -> np.ndarray:
    """Predictions that take part at score threshold ``s``."""
    score = data.predictions.score
    return (score >= s) & (score > EPSILON)


def confusion_counts(
    data: DetectionData,
    iou_type: str,
    iou_thresholds: Sequence[float],
    score_thresholds: Sequence[float],
    *,
    chunk: int = 500,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(matrix (T, S, K, K), unmatched_gt (T, S, K), unmatched_pd (T, S, K))`` over all labels
    (rows: ground-truth label, columns: predicted label; labels of different keys never meet)."""
    gts, dts = data.groundtruths, data.predictions
    K, T, S = len(data.labels), len(iou_thresholds), len(score_thresholds)
    pd, pg, iou = chosen_pairs(data, iou_type, chunk=chunk)
    gl, pl = gts.label[pg], dts.label[pd]
    n_gt = np.bincount(gts.label[~gts.crowd], minlength=K)
    matrix = np.zeros((T, S, K * K), dtype=np.int64)
    ugt = np.zeros((T, S, K), dtype=np.int64)
    upd = np.zeros((T, S, K), dtype=np.int64)
    for si, s in enumerate(score_thresholds):
        n_pd = np.bincount(dts.label[live_predictions(data, s)], minlength=K)
        for ti, t in enumerate(iou_thresholds):
            ok = counted(data, iou, pd, t, s)
            matrix[ti, si] = np.bincount(gl[ok] * K + pl[ok], minlength=K * K)
            ugt[ti, si] = n_gt - np.bincount(gl[ok], minlength=K)
            upd[ti, si] = n_pd - np.bincount(pl[ok], minlength=K)
    return matrix.reshape(T, S, K, K), ugt, upd


def confusion_matrices(
    data: DetectionData,
    iou_type: str,
    iou_thresholds: Sequence[float],
    score_thresholds: Sequence[float],
) -> list[Metric]:
    """``ConfusionMatrix`` records, one per (label key, IoU threshold, score threshold)."""
    matrix, ugt, upd = confusion_counts(data, iou_type, iou_thresholds, score_thresholds)
    out: list[Metric] = []
    for key in sorted({k for k, _ in data.labels}, key=natural_key):
        ks = sorted(
            (k for k, lab in enumerate(data.labels) if lab[0] == key),
            key=lambda k: natural_key(data.labels[k]),
        )
        names = [data.labels[k][1] for k in ks]
        for ti, t in enumerate(iou_thresholds):
            for si, s in enumerate(score_thresholds):
                m = matrix[ti, si]
                value = {
                    "confusion_matrix": {
                        g: {p: int(m[kg, kp]) for p, kp in zip(names, ks)}
                        for g, kg in zip(names, ks)
                    },
                    "unmatched_predictions": {p: int(upd[ti, si, k]) for p, k in zip(names, ks)},
                    "unmatched_ground_truths": {g: int(ugt[ti, si, k]) for g, k in zip(names, ks)},
                }
                out.append(
                    records.confusion_matrix(
                        value, label_key=key, iou_threshold=t, score_threshold=s
                    )
                )
    return out
