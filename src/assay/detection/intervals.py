"""Confidence intervals of AP, APAveragedOverIOUs, mAP and mAPAveragedOverIOUs: a bootstrap
over images (datums), from the COCO matching already computed (see :mod:`assay.intervals`).

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
COCO's order; equal scores within an image would interleave them). Images are resampled in
uid order, so the interval does not depend on the order in which batches were added.

A label without ground truths in a resample has no AP there (left out of mAP, as in the
point estimate; ``zero_division`` gives it that value instead). The AP of every resample
comes from :mod:`assay.detection.ap_bootstrap`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.detection.ap_bootstrap import ROW_ELEMENTS, ap_statistic
from assay.detection.compute import CocoEvaluation
from assay.detection.types import DetectionData
from assay.intervals import CIOptions, Clusters, bootstrap, cluster_codes, percentile
from assay.results import Metric

__all__ = [
    "ap_record_values",
    "ap_replicates",
    "ap_statistic",
    "ar_column",
    "ar_replicates",
    "attach_ap_intervals",
    "attach_ar_intervals",
    "canon_labels",
    "image_order",
    "resampled",
]

F64 = NDArray[np.float64]


def image_order(data: DetectionData) -> NDArray[np.intp]:
    """Each datum's column in the resample counts: its rank by uid (as text)."""
    order = np.argsort(np.array([str(u) for u in data.uids]), kind="stable")
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order))
    return rank


def resampled(data: DetectionData, opts: CIOptions) -> NDArray[np.int64] | Clusters:
    """What a resample draws: the images (columns in uid order), or with ``cluster`` the
    clusters of the image metadata field it names."""
    if opts.cluster is None:
        return np.ones(data.n_datums, dtype=np.int64)
    codes = cluster_codes(data.metadata, opts.cluster, "images")
    return Clusters.of(image_order(data), codes, data.n_datums)


def ap_replicates(
    ev: CocoEvaluation, t_idx: list[int], opts: CIOptions, zero_division: float | None
) -> F64:
    """The AP of each threshold and label on every resample, shape (B, T, K)."""
    statistic, rows = ap_statistic(ev, t_idx, zero_division, image_order(ev.data))
    chunk = max(1, ROW_ELEMENTS // rows) * ev.data.n_datums
    units = resampled(ev.data, opts)
    reps = bootstrap(statistic, units, opts.num_bootstrap, opts.seed, chunk)
    return reps.reshape(-1, len(t_idx), len(ev.data.labels))


def _means(reps: F64, labels: list[Any], keys: list[str]) -> dict[tuple[Any, ...], F64]:
    """Per-resample AP averages: over IoUs per label, over labels per key (and both)."""
    out: dict[tuple[Any, ...], F64] = {}
    with np.errstate(invalid="ignore"):
        defined = ~np.isnan(reps).any(axis=1)  # (B, K): a label is defined at every threshold
        out[("APAveragedOverIOUs",)] = np.where(defined, reps.mean(axis=1), np.nan)
        for key in keys:
            ks = np.array([lab[0] == key for lab in labels])
            sel = defined & ks[None, :]
            cnt = sel.sum(axis=1)
            per_t = np.where(sel[:, None, :], reps, 0.0).sum(axis=2) / cnt[:, None]
            out[("mAP", key)] = per_t
            out[("mAPAveragedOverIOUs", key)] = per_t.mean(axis=1)
    return out


def canon_labels(data: DetectionData) -> list[int]:
    """Label indices in one order whatever order the batches came in, so the means over
    labels sum in the same order (and agree to the last bit)."""
    return sorted(range(len(data.labels)), key=lambda k: data.labels[k])


def ap_record_values(
    records: list[Metric], reps: F64, labels: list[Any], ious: F64
) -> list[tuple[Metric, F64]]:
    """Each defined AP-family record of ``records`` with its replicates, from ``reps`` (B, T,
    K) of the AP of every threshold and label (``labels`` order; NaN where undefined)."""
    keys = sorted({k for k, _ in labels})
    means = _means(reps, labels, keys)
    where = {lab: k for k, lab in enumerate(labels)}
    tpos = {round(float(t), 10): i for i, t in enumerate(ious)}
    out = []
    for m in records:
        p = m.parameters
        if m.value is None:
            continue
        if m.type == "AP":
            k = where[(p["label_key"], p["label_value"])]
            out.append((m, reps[:, tpos[p["iou_threshold"]], k]))
        elif m.type == "APAveragedOverIOUs":
            k = where[(p["label_key"], p["label_value"])]
            out.append((m, means[("APAveragedOverIOUs",)][:, k]))
        elif m.type == "mAP":
            out.append((m, means[("mAP", p["label_key"])][:, tpos[p["iou_threshold"]]]))
        elif m.type == "mAPAveragedOverIOUs":
            out.append((m, means[("mAPAveragedOverIOUs", p["label_key"])]))
    return out


def attach_ap_intervals(
    records: list[Metric],
    ev: CocoEvaluation,
    t_idx: list[int],
    ious: F64,
    opts: CIOptions,
    zero_division: float | None,
) -> None:
    """Add the interval parameters to the defined AP-family records, in place."""
    canon = canon_labels(ev.data)
    labels = [ev.data.labels[k] for k in canon]
    reps = ap_replicates(ev, t_idx, opts, zero_division)[:, :, canon]
    for m, values in ap_record_values(records, reps, labels, ious):
        lo, hi = percentile(values, opts.level)
        m.parameters.update(opts.parameters(float(lo), float(hi), "bootstrap"))


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


def ar_replicates(
    data: DetectionData,
    m: Any,
    ar_idx: list[int],
    score_thresholds: list[float],
    opts: CIOptions,
    zero_division: float | None,
) -> tuple[F64, list[Any]]:
    """The bootstrap replicates (B, S K + S keys) of AR per score threshold and label, then
    mAR per score threshold and key (:func:`ar_column` finds a record's column), and the
    labels in canonical order: a resample's TPs and ground truths per label are ``w @`` the
    per-image counts."""
    tp, npig = _image_tp(data, m, ar_idx, score_thresholds)
    D, T, S, K = tp.shape
    canon = canon_labels(data)
    labels = [data.labels[k] for k in canon]
    tp, npig = tp[..., canon], npig[:, canon]
    keys = sorted({k for k, _ in labels})
    in_key = np.array([[lab[0] == key for lab in labels] for key in keys])  # (keys, K)

    def statistic(w: F64) -> F64:
        hits = (w @ tp.reshape(D, -1)).reshape(-1, T, S, K)
        n = (w @ npig)[:, None, None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            recall = np.where(n > 0, hits / n, np.nan if zero_division is None else zero_division)
            ar = recall.mean(axis=1)  # (b, S, K)
            ok = ~np.isnan(ar)
            sel = ok[:, :, None, :] & in_key[None, None, :, :]  # (b, S, keys, K)
            mar = np.where(sel, ar[:, :, None, :], 0.0).sum(axis=3) / sel.sum(axis=3)
        return np.concatenate([ar.reshape(len(w), -1), mar.reshape(len(w), -1)], axis=1)

    units = resampled(data, opts)
    return bootstrap(statistic, units, opts.num_bootstrap, opts.seed), labels


def ar_column(rec: Metric, labels: list[Any], score_thresholds: list[float]) -> int | None:
    """The column of :func:`ar_replicates`'s output that a defined ``AR`` / ``mAR`` record
    reads (``labels`` in canonical order); None for any other record."""
    p = rec.parameters
    if rec.value is None or rec.type not in ("AR", "mAR"):
        return None
    K, S = len(labels), len(score_thresholds)
    keys = sorted({k for k, _ in labels})
    spos = {round(float(s), 10): i for i, s in enumerate(score_thresholds)}
    si = spos[round(float(p["score_threshold"]), 10)]
    if rec.type == "AR":
        return si * K + labels.index((p["label_key"], p["label_value"]))
    return S * K + si * len(keys) + keys.index(p["label_key"])


def attach_ar_intervals(
    records: list[Metric],
    data: DetectionData,
    m: Any,
    ar_idx: list[int],
    score_thresholds: list[float],
    opts: CIOptions,
    zero_division: float | None,
) -> None:
    """Bootstrap intervals over images on the defined ``AR`` and ``mAR`` records, in place
    (:func:`ar_replicates`)."""
    reps, labels = ar_replicates(data, m, ar_idx, score_thresholds, opts, zero_division)
    lo, hi = percentile(reps, opts.level)
    for rec in records:
        c = ar_column(rec, labels, score_thresholds)
        if c is not None:
            rec.parameters.update(opts.parameters(float(lo[c]), float(hi[c]), "bootstrap"))
