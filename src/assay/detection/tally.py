"""The detection tallies: AP, APAveragedOverIOUs, mAP, mAPAveragedOverIOUs, AR and mAR over a
bootstrap of images (datums), from the COCO matching already computed (the engine:
:mod:`assay.uncertainty`).

Sufficient statistics, per (IoU threshold, label): the label's kept, not-ignored detections
in accumulation order (descending score), each with its image and its TP / FP flag, and per
image the label's not-ignored ground truths. A resample gives image ``i`` a count ``w_i``;
a detection then stands for ``w_i`` copies, so with running weighted sums::

    TP_j = sum_{d <= j} w_img(d) tp_d     FP_j likewise     n = sum_i w_i npig_i
    precision_j = TP_j / (TP_j + FP_j + eps)     recall_j = TP_j / n

and AP is COCO's 101-point read of the precision envelope. Reading the copies of one
detection at its last copy is exact: between copies of a TP both precision and recall rise
(the earlier points are dominated), between copies of an FP recall stays and precision falls.
So the resampled AP equals COCOeval on the images copied ``w_i`` times, as long as no two
detections of one image and label share a score (copies of one image are adjacent in
COCO's order; equal scores within an image would interleave them). The AP of every
resample comes from :mod:`assay.detection.ap_bootstrap`; AR's TPs and ground truths per
label are ``w @`` the per-image counts. Images are resampled in uid order, so the interval
does not depend on the order in which batches were added.

A label without ground truths in a resample has no AP there (left out of mAP, as in the
point estimate; ``zero_division`` gives it that value instead). Keys: the records'
``(type, label_key, label_value, iou_threshold, score_threshold)`` (:data:`WHERE`).

A slice's gap: the whole set's replicates once, then per slice the tally of the whole set's
images with only the slice's annotations kept (every image stays, so a resample draws the
same counts for them, and the others weigh nothing; the slice's labels only, as when its
images are evaluated alone, also under ``zero_division``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.detection.ap_bootstrap import ROW_ELEMENTS, ap_statistic
from assay.detection.compute import CocoEvaluation
from assay.detection.filters import subset
from assay.detection.records import threshold
from assay.detection.types import DetectionData
from assay.uncertainty.clusters import cluster_codes
from assay.uncertainty.resampling import CHUNK_ELEMENTS
from assay.uncertainty.tally import Key, Tally

__all__ = [
    "WHERE",
    "ap_tally",
    "ar_tally",
    "image_order",
    "slice_only",
]

F64 = NDArray[np.float64]
#: What identifies a record among a slice's (beside its type): its tally key.
WHERE = ("label_key", "label_value", "iou_threshold", "score_threshold")


def image_order(data: DetectionData) -> NDArray[np.intp]:
    """Each datum's column in the resample counts: its rank by uid (as text)."""
    order = np.argsort(np.array([str(u) for u in data.uids]), kind="stable")
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order))
    return rank


def _canon(data: DetectionData) -> list[int]:
    """Label indices in one order whatever order the batches came in, so the means over
    labels sum in the same order (and agree to the last bit)."""
    return sorted(range(len(data.labels)), key=lambda k: data.labels[k])


def _tally(data: DetectionData, keys: list[Key], values: Any, chunk: int = CHUNK_ELEMENTS) -> Tally:
    def codes(column: str) -> NDArray[np.intp]:
        return cluster_codes(data.metadata, column, "images")

    return Tally(
        tuple(keys),
        values,
        np.ones(data.n_datums, dtype=np.int64),
        unit=image_order(data),
        ids=np.asarray(data.uids, dtype=object),
        codes=codes,
        chunk=chunk,
    )


def ap_tally(
    ev: CocoEvaluation, t_idx: list[int], ious: ArrayLike, zero_division: float | None
) -> Tally:
    """AP per IoU threshold and label, APAveragedOverIOUs per label, mAP per key and IoU
    threshold, mAPAveragedOverIOUs per key (``t_idx``: the thresholds ``ious`` among the
    evaluation's)."""
    data = ev.data
    statistic, rows = ap_statistic(ev, t_idx, zero_division, image_order(data))
    canon = _canon(data)
    labels = [data.labels[k] for k in canon]
    T, K = len(t_idx), len(labels)
    lks = sorted({k for k, _ in labels})
    in_key = np.array([[lab[0] == lk for lab in labels] for lk in lks]).reshape(-1, K)
    ts = [threshold(float(t)) for t in np.asarray(ious).tolist()]
    keys: list[Key] = [("AP", lk, lv, t, None) for t in ts for lk, lv in labels]
    keys += [("APAveragedOverIOUs", lk, lv, None, None) for lk, lv in labels]
    keys += [("mAP", lk, None, t, None) for lk in lks for t in ts]
    keys += [("mAPAveragedOverIOUs", lk, None, None, None) for lk in lks]

    def values(w: F64) -> F64:
        reps = statistic(w).reshape(-1, T, len(data.labels))[:, :, canon]
        b = reps.shape[0]
        with np.errstate(invalid="ignore"):
            defined = ~np.isnan(reps).any(axis=1)  # (b, K): a label is defined at every IoU
            averaged = np.where(defined, reps.mean(axis=1), np.nan)
            means, over = [], []
            for ks in in_key:
                sel = defined & ks[None, :]
                per_t = np.where(sel[:, None, :], reps, 0.0).sum(axis=2) / sel.sum(axis=1)[:, None]
                means.append(per_t)
                over.append(per_t.mean(axis=1))
        parts = [reps.reshape(b, T * K), averaged, *means, np.array(over).reshape(-1, b).T]
        return np.concatenate(parts, axis=1)

    return _tally(data, keys, values, max(1, ROW_ELEMENTS // rows) * data.n_datums)


def _image_tp(
    data: DetectionData, m: Any, t_index: list[int], score_thresholds: list[float]
) -> tuple[F64, F64]:
    """Per image column: TPs ``(D, T, S, K)`` (as :func:`threshold_counts`, per image) and the
    not-ignored ground truths ``(D, K)``."""
    dts, gts = data.predictions, data.groundtruths
    col = image_order(data)
    K, S, D = len(data.labels), len(score_thresholds), data.n_datums
    ths = np.asarray(score_thresholds, dtype=np.float64)
    order = np.argsort(ths, kind="stable")
    lab = dts.label[m.det]
    bins = np.searchsorted(ths[order], dts.score[m.det], side="right")
    key = (col[dts.datum[m.det]] * (S + 1) + bins) * K + lab
    tp = np.zeros((D, len(t_index), S, K))
    for i, ti in enumerate(t_index):
        mask = m.dtm[0, ti] & ~m.dt_ignore[0, ti]
        hist = np.bincount(key[mask], minlength=D * (S + 1) * K).reshape(D, S + 1, K)
        tp[:, i, order] = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1][:, 1:]
    keep = ~m.gt_ignore[0]
    npig = np.zeros((D, K))
    np.add.at(npig, (col[gts.datum[keep]], gts.label[keep]), 1.0)
    return tp, npig


def ar_tally(
    data: DetectionData,
    m: Any,
    ar_idx: list[int],
    score_thresholds: list[float],
    zero_division: float | None,
) -> Tally:
    """AR per score threshold and label, then mAR per score threshold and key (``m``: the
    matching, ``ar_idx``: the AR thresholds among its)."""
    tp, npig = _image_tp(data, m, ar_idx, score_thresholds)
    D, T, S, K = tp.shape
    canon = _canon(data)
    labels = [data.labels[k] for k in canon]
    tp, npig = tp[..., canon], npig[:, canon]
    lks = sorted({k for k, _ in labels})
    in_key = np.array([[lab[0] == lk for lab in labels] for lk in lks])  # (keys, K)
    ss = [float(s) for s in score_thresholds]
    keys: list[Key] = [("AR", lk, lv, None, s) for s in ss for lk, lv in labels]
    keys += [("mAR", lk, None, None, s) for s in ss for lk in lks]

    def values(w: F64) -> F64:
        hits = (w @ tp.reshape(D, -1)).reshape(-1, T, S, K)
        n = (w @ npig)[:, None, None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            recall = np.where(n > 0, hits / n, np.nan if zero_division is None else zero_division)
            ar = recall.mean(axis=1)  # (b, S, K)
            ok = ~np.isnan(ar)
            sel = ok[:, :, None, :] & in_key[None, None, :, :]  # (b, S, keys, K)
            mar = np.where(sel, ar[:, :, None, :], 0.0).sum(axis=3) / sel.sum(axis=3)
        return np.concatenate([ar.reshape(len(w), -1), mar.reshape(len(w), -1)], axis=1)

    return _tally(data, keys, values)


def slice_only(data: DetectionData, keep: NDArray[np.bool_], labels: list[Any]) -> DetectionData:
    """``data`` with only the annotations of the images ``keep`` and the ``labels`` (the
    slice's): every image stays, so a resample draws the same counts for them, and the
    others weigh nothing (a slice's tallies, for its gaps)."""
    g, p = data.groundtruths, data.predictions
    kept = replace(data, groundtruths=g.take(keep[g.datum]), predictions=p.take(keep[p.datum]))
    return subset(kept, labels=labels)
