"""Metric records for detection and instance segmentation (spec: valor-metrics.md).

:func:`compute_metrics` turns a :class:`~assay.detection.types.DetectionData` into
:class:`~assay.results.Metric` records:

========================  ==============================================================
type                      value / parameters
========================  ==============================================================
AP                        101-point interpolated AP of one label at one IoU threshold
APAveragedOverIOUs        mean of AP over ``iou_thresholds`` (COCO's per-class AP)
mAP                       mean AP over the labels of a label key, at one IoU threshold
mAPAveragedOverIOUs       mean of mAP over ``iou_thresholds``
AR                        mean over ``ar_iou_thresholds`` of recall counting TPs with
                          ``score >= recall_score_threshold``
mAR                       mean AR over the labels of a label key
PrecisionRecallCurve      per label key: {label: {score threshold: tp, fp, fn, precision,
                          recall, f1_score}} at ``pr_curve_iou_threshold``
DetailedPrecisionRecallCurve  as above, FPs split into hallucinations / misclassifications,
                          FNs into misclassifications / missed_detections, with examples
COCOSummary               the 12 classic COCOeval numbers (``statistic`` parameter)
========================  ==============================================================

Matching is COCO's (see :mod:`assay.detection.compute`), so AP/mAP equal pycocotools'
per-class AP / AP summaries. A label without a (non-crowd) ground truth has undefined AP
and AR (value ``None``, reason in ``parameters["undefined"]``) and is left out of mAP/mAR.

Example:
    >>> from assay.detection.synthetic import make_coco
    >>> from assay.detection.io import load_coco
    >>> data = load_coco(*make_coco(n_images=5, n_categories=3, seed=0))
    >>> ms = compute_metrics(data, metrics=["mAPAveragedOverIOUs"])
    >>> 0 <= ms.get("mAPAveragedOverIOUs", label_key="class").value <= 1
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.detection.compute import (
    COCO_IOU_THRESHOLDS,
    STAT_NAMES,
    CocoEvaluation,
    CocoParams,
    evaluate,
    match,
)
from assay.detection.geometry import box_iou, segm_iou
from assay.detection.types import POLYGON, RASTER, DetectionData
from assay.errors import UndefinedMetricError
from assay.results import Metric, MetricSet, undefined

__all__ = [
    "METRIC_TYPES",
    "DEFAULT_METRICS",
    "PR_SCORE_THRESHOLDS",
    "compute_metrics",
    "coco_summary",
    "average_precision",
    "geometry_json",
]

METRIC_TYPES = (
    "AP",
    "APAveragedOverIOUs",
    "mAP",
    "mAPAveragedOverIOUs",
    "AR",
    "mAR",
    "PrecisionRecallCurve",
    "DetailedPrecisionRecallCurve",
    "COCOSummary",
)
DEFAULT_METRICS = (
    "AP",
    "APAveragedOverIOUs",
    "mAP",
    "mAPAveragedOverIOUs",
    "AR",
    "mAR",
    "PrecisionRecallCurve",
)
PR_SCORE_THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 20))
NO_GT = "requires at least one ground truth (not crowd) of the label"


def _fmt(t: float) -> float:
    return round(float(t), 10)


def coco_summary(ev: CocoEvaluation) -> MetricSet:
    """The 12 COCOeval summary numbers as ``COCOSummary`` records (undefined where COCO prints -1).

    Example:
        >>> from assay.detection.synthetic import make_coco
        >>> from assay.detection.io import load_coco
        >>> ms = coco_summary(evaluate(load_coco(*make_coco(n_images=5, seed=1))))
        >>> len(ms), ms[0].parameters["statistic"]
        (12, 'AP')
    """
    out = []
    for (stat, iou, area, md), v in zip(STAT_NAMES, ev.stats()):
        p = {
            "statistic": stat,
            "iou": iou,
            "area": area,
            "max_dets": md,
            "iou_type": ev.params.iou_type,
        }
        out.append(
            Metric("COCOSummary", float(v), p) if v > -1 else undefined("COCOSummary", NO_GT, **p)
        )
    return MetricSet(out)


def average_precision(
    data: DetectionData,
    *,
    iou_threshold: float = 0.5,
    label: tuple[str, str] | None = None,
    iou_type: str = "bbox",
    max_detections: int | None = 100,
) -> float:
    """Strict AP (101-point, COCO matching) of one label at one IoU threshold.

    Raises :class:`UndefinedMetricError` if the label has no non-crowd ground truth.
    ``label=None`` works when the data has a single label.

    Example:
        >>> from assay.detection.synthetic import make_coco
        >>> from assay.detection.io import load_coco
        >>> data = load_coco(*make_coco(n_images=5, n_categories=2, seed=0))
        >>> 0 <= average_precision(data, label=("class", "cat1")) <= 1
        True
    """
    if label is None:
        if len(data.labels) != 1:
            raise ValueError("label= is required when the data has several labels")
        label = data.labels[0]
    k = data.labels.index(tuple(label))
    md = _max_det(data, max_detections)
    ev = evaluate(
        data,
        CocoParams(
            iou_type=iou_type,
            iou_thresholds=[iou_threshold],
            area_ranges=(("all", 0, 1e10),),
            max_dets=(md,),
        ),
    )
    s = ev.precision[0, :, k, 0, 0]
    if (s <= -1).any():
        raise UndefinedMetricError("AP", NO_GT)
    return float(np.mean(s))


def _label_order(data: DetectionData) -> list[int]:
    """Label indices sorted by (key, value): records come out in the same order however the
    data was batched."""
    return sorted(range(len(data.labels)), key=lambda k: data.labels[k])


def _max_det(data: DetectionData, max_detections: int | None) -> int:
    if max_detections is None:
        return max(1, len(data.predictions))
    if max_detections < 1:
        raise ValueError("max_detections must be >= 1")
    return int(max_detections)


def compute_metrics(
    data: DetectionData,
    *,
    iou_type: str = "bbox",
    iou_thresholds: Sequence[float] | None = None,
    ar_iou_thresholds: Sequence[float] = (0.5, 0.75),
    recall_score_threshold: float = 0.0,
    max_detections: int | None = 100,
    pr_curve_iou_threshold: float = 0.5,
    pr_curve_max_examples: int = 1,
    metrics: Sequence[str] | None = None,
) -> MetricSet:
    """Detection metrics as :class:`~assay.results.Metric` records.

    Args:
        data: ground truths and predictions.
        iou_type: ``"bbox"`` or ``"segm"``.
        iou_thresholds: thresholds for AP and the averaged metrics (default 0.50:0.05:0.95).
        ar_iou_thresholds: thresholds AR averages over (default [0.5, 0.75], as the spec).
        recall_score_threshold: AR counts only TPs with ``score >=`` this.
        max_detections: detections kept per (datum, label), highest scores first (COCO's 100);
            ``None`` keeps all.
        pr_curve_iou_threshold: IoU threshold of the (detailed) precision-recall curves.
        pr_curve_max_examples: examples per observation in ``DetailedPrecisionRecallCurve``.
        metrics: metric types to return (default :data:`DEFAULT_METRICS`;
            ``DetailedPrecisionRecallCurve`` and ``COCOSummary`` only when asked for).

    Formulas: spec ``valor-metrics.md`` (AP: 101-point interpolation of the precision-recall
    curve of COCO-matched detections; mAP = mean AP over labels; AR = mean recall over IoU
    thresholds; mAR = mean AR over labels).
    """
    wanted = list(DEFAULT_METRICS if metrics is None else metrics)
    unknown = [m for m in wanted if m not in METRIC_TYPES]
    if unknown:
        raise ValueError(f"unknown metric type(s) {unknown}; choose from {list(METRIC_TYPES)}")
    ious = np.asarray(
        COCO_IOU_THRESHOLDS if iou_thresholds is None else iou_thresholds, dtype=np.float64
    )
    ar_ious = np.asarray(ar_iou_thresholds, dtype=np.float64)
    md = _max_det(data, max_detections)
    out: list[Metric] = []
    keys = sorted({k for k, _ in data.labels})
    K = len(data.labels)

    need_ap = any(m in wanted for m in ("AP", "APAveragedOverIOUs", "mAP", "mAPAveragedOverIOUs"))
    need_ar = any(m in wanted for m in ("AR", "mAR"))
    if need_ap or need_ar:
        all_t = np.unique(np.concatenate([ious, ar_ious])) if need_ar else ious
        ev = evaluate(
            data,
            CocoParams(
                iou_type=iou_type,
                iou_thresholds=all_t,
                area_ranges=(("all", 0.0, 1e5**2),),
                max_dets=(md,),
            ),
        )
        t_idx = [int(np.flatnonzero(all_t == t)[0]) for t in ious]
        prec = ev.precision[:, :, :, 0, 0]  # (T, R, K)
        ap = np.where((prec > -1).all(axis=1), prec.mean(axis=1), -1.0)[t_idx]  # (T, K)
        if need_ap:
            out += _ap_records(data, ap, ious, keys, wanted)
        if need_ar:
            out += _ar_records(data, ev, all_t, ar_ious, recall_score_threshold, keys, wanted)
    if "COCOSummary" in wanted:
        out += list(
            coco_summary(evaluate(data, CocoParams(iou_type=iou_type), all_precision=False))
        )
    if "PrecisionRecallCurve" in wanted or "DetailedPrecisionRecallCurve" in wanted:
        out += _pr_curves(
            data, iou_type, pr_curve_iou_threshold, md, pr_curve_max_examples, keys, wanted
        )
    return MetricSet(out)


def _ap_records(
    data: DetectionData, ap: np.ndarray, ious: np.ndarray, keys: list[str], wanted: list[str]
) -> list[Metric]:
    out: list[Metric] = []
    K = len(data.labels)
    defined = (ap > -1).all(axis=0)  # per label: defined at every threshold (same ground truths)
    tl = [_fmt(t) for t in ious]
    for k in _label_order(data):
        key, value = data.labels[k]
        if "AP" in wanted:
            for ti, t in enumerate(tl):
                p = {"label_key": key, "label_value": value, "iou_threshold": t}
                out.append(
                    Metric("AP", float(ap[ti, k]), p) if defined[k] else undefined("AP", NO_GT, **p)
                )
        if "APAveragedOverIOUs" in wanted:
            p = {"label_key": key, "label_value": value, "iou_thresholds": tl}
            out.append(
                Metric("APAveragedOverIOUs", float(np.mean(ap[:, k])), p)
                if defined[k]
                else undefined("APAveragedOverIOUs", NO_GT, **p)
            )
    for key in keys:
        ks = [k for k in _label_order(data) if data.labels[k][0] == key and defined[k]]
        if "mAP" in wanted:
            for ti, t in enumerate(tl):
                p = {"label_key": key, "iou_threshold": t}
                out.append(
                    Metric("mAP", float(np.mean(ap[ti, ks])), p)
                    if ks
                    else undefined("mAP", "requires a label with ground truths", **p)
                )
        if "mAPAveragedOverIOUs" in wanted:
            p = {"label_key": key, "iou_thresholds": tl}
            out.append(
                Metric("mAPAveragedOverIOUs", float(np.mean(ap[:, ks])), p)
                if ks
                else undefined("mAPAveragedOverIOUs", "requires a label with ground truths", **p)
            )
    return out


def _ar_records(
    data: DetectionData,
    ev: CocoEvaluation,
    all_t: np.ndarray,
    ar_ious: np.ndarray,
    score_thr: float,
    keys: list[str],
    wanted: list[str],
) -> list[Metric]:
    m = ev.matching
    K = len(data.labels)
    dts, gts = data.predictions, data.groundtruths
    npig = np.bincount(gts.label[~m.gt_ignore[0]], minlength=K)
    lab = dts.label[m.det]
    qualified = dts.score[m.det] >= score_thr
    recalls = []
    for t in ar_ious:
        ti = int(np.flatnonzero(all_t == t)[0])
        tp = m.dtm[0, ti] & ~m.dt_ignore[0, ti] & qualified
        recalls.append(np.bincount(lab[tp], minlength=K) / np.maximum(npig, 1))
    ar = np.mean(recalls, axis=0) if recalls else np.zeros(K)
    tl = [_fmt(t) for t in ar_ious]
    out: list[Metric] = []
    for k in _label_order(data):
        if "AR" in wanted:
            key, value = data.labels[k]
            p = {
                "label_key": key,
                "label_value": value,
                "iou_thresholds": tl,
                "score_threshold": float(score_thr),
            }
            out.append(
                Metric("AR", float(ar[k]), p) if npig[k] > 0 else undefined("AR", NO_GT, **p)
            )
    if "mAR" in wanted:
        for key in keys:
            ks = [k for k in _label_order(data) if data.labels[k][0] == key and npig[k] > 0]
            p = {"label_key": key, "iou_thresholds": tl, "score_threshold": float(score_thr)}
            out.append(
                Metric("mAR", float(np.mean(ar[ks])), p)
                if ks
                else undefined("mAR", "requires a label with ground truths", **p)
            )
    return out


def geometry_json(data: DetectionData, side: str, row: int) -> dict[str, Any]:
    """A JSON-able description of one annotation's geometry (for curve examples).

    Boxes as ``{"type": "box", "xmin", "ymin", "xmax", "ymax"}``, polygons as GeoJSON
    ``{"type": "Polygon", "coordinates"}``, rasters as ``{"type": "rle", "size", "counts"}``.
    """
    a = data.predictions if side == "prediction" else data.groundtruths
    kind = int(a.kind[row])
    if kind == POLYGON:
        import shapely

        return shapely.geometry.mapping(a.polygons[row]) | {"type": "Polygon"}
    if kind == RASTER:
        r = a.rles[row]
        c = r["counts"]
        return {
            "type": "rle",
            "size": list(r["size"]),
            "counts": c.decode() if isinstance(c, bytes) else c,
        }
    x, y, w, h = (float(v) for v in a.box[row])
    return {"type": "box", "xmin": x, "ymin": y, "xmax": x + w, "ymax": y + h}


def _example(data: DetectionData, side: str, row: int) -> dict[str, Any]:
    a = data.predictions if side == "prediction" else data.groundtruths
    uid = data.uids[int(a.datum[row])]
    return {
        "datum": uid,
        "annotation": int(a.ann_id[row]),
        "geometry": geometry_json(data, side, row),
    }


def _cross_label_hits(
    data: DetectionData, iou_type: str, thr: float, det: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For misclassifications: per kept detection, does a ground truth of the same key but another
    value overlap it with IoU >= thr; per ground truth, the best score of such a detection."""
    gts, dts = data.groundtruths, data.predictions
    n, G = len(det), len(gts)
    pred_hit = np.zeros(n, dtype=bool)
    gt_best = np.full(G, -np.inf)
    if n == 0 or G == 0:
        return pred_hit, gt_best
    key_names = sorted({k for k, _ in data.labels})
    key_of = np.array([key_names.index(k) for k, _ in data.labels], dtype=np.int64)
    # all (detection, ground truth) pairs on the same datum
    gorder = np.argsort(gts.datum, kind="stable")
    gs = gts.datum[gorder]
    dd = dts.datum[det]
    lo, hi = np.searchsorted(gs, dd, "left"), np.searchsorted(gs, dd, "right")
    cnt = hi - lo
    pd = np.repeat(np.arange(n), cnt)
    off = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    pg = gorder[np.repeat(lo, cnt) + off]
    drow = det[pd]
    keep = (
        (key_of[dts.label[drow]] == key_of[gts.label[pg]])
        & (dts.label[drow] != gts.label[pg])
        & ~gts.crowd[pg]
    )
    pd, pg, drow = pd[keep], pg[keep], drow[keep]
    if iou_type == "bbox":
        iou = box_iou(dts.box[drow], gts.box[pg], np.zeros(len(pg), bool))
    else:
        iou = segm_iou(dts, gts, drow, pg) if len(pg) else np.zeros(0)
    hit = iou >= min(thr, 1 - 1e-10)
    pred_hit[pd[hit]] = True
    np.maximum.at(gt_best, pg[hit], dts.score[drow[hit]])
    return pred_hit, gt_best


def _pr_curves(
    data: DetectionData,
    iou_type: str,
    thr: float,
    md: int,
    max_examples: int,
    keys: list[str],
    wanted: list[str],
) -> list[Metric]:
    detailed = "DetailedPrecisionRecallCurve" in wanted
    m = match(
        data,
        CocoParams(
            iou_type=iou_type,
            iou_thresholds=[thr],
            area_ranges=(("all", 0.0, 1e5**2),),
            max_dets=(md,),
        ),
        with_gt=detailed,
    )
    gts, dts = data.groundtruths, data.predictions
    K = len(data.labels)
    det = m.det
    lab = dts.label[det]
    score = dts.score[det]
    tp = m.dtm[0, 0] & ~m.dt_ignore[0, 0]
    fp = ~m.dtm[0, 0] & ~m.dt_ignore[0, 0]
    counted_gt = ~m.gt_ignore[0]
    npig = np.bincount(gts.label[counted_gt], minlength=K)
    ths = np.array(PR_SCORE_THRESHOLDS)
    if detailed:
        pred_mis, gt_best_cross = _cross_label_hits(data, iou_type, thr, det)
        # the score of the detection that matched each ground truth (-inf if none)
        gt_match_score = np.full(len(gts), -np.inf)
        hit = m.dt_gt[0, 0] >= 0
        gt_match_score[m.dt_gt[0, 0][hit]] = score[hit]
    simple: dict[str, dict[str, Any]] = {k: {} for k in keys}
    detail: dict[str, dict[str, Any]] = {k: {} for k in keys}
    for k in _label_order(data):
        key, value = data.labels[k]
        sel = lab == k
        s_tp = np.sort(score[sel & tp])
        s_fp = np.sort(score[sel & fp])
        n_tp = len(s_tp) - np.searchsorted(s_tp, ths, "left")
        n_fp = len(s_fp) - np.searchsorted(s_fp, ths, "left")
        curve = {}
        for i, t in enumerate(PR_SCORE_THRESHOLDS):
            a, b, c = int(n_tp[i]), int(n_fp[i]), int(npig[k] - n_tp[i])
            curve[t] = {
                "tp": a,
                "fp": b,
                "fn": c,
                "precision": a / (a + b) if a + b else None,
                "recall": a / (a + c) if a + c else None,
                "f1_score": 2 * a / (2 * a + b + c) if (2 * a + b + c) else None,
            }
        simple[key][value] = curve
        if detailed:
            detail[key][value] = _detailed_label(
                data,
                k,
                det,
                sel,
                tp,
                fp,
                score,
                pred_mis,
                gt_best_cross,
                gt_match_score,
                counted_gt,
                max_examples,
            )
    out: list[Metric] = []
    for key in keys:
        p = {"label_key": key, "pr_curve_iou_threshold": _fmt(thr)}
        if "PrecisionRecallCurve" in wanted:
            out.append(Metric("PrecisionRecallCurve", simple[key], dict(p)))
        if detailed:
            out.append(
                Metric(
                    "DetailedPrecisionRecallCurve",
                    detail[key],
                    {**p, "pr_curve_max_examples": max_examples},
                )
            )
    return out


def _detailed_label(
    data,
    k,
    det,
    sel,
    tp,
    fp,
    score,
    pred_mis,
    gt_best_cross,
    gt_match_score,
    counted_gt,
    max_examples,
):
    gts = data.groundtruths

    # deterministic example order: datum order, then annotation row
    def rows_sorted(rows: np.ndarray, side: str) -> np.ndarray:
        a = data.predictions if side == "prediction" else gts
        return rows[np.lexsort((rows, a.datum[rows]))] if len(rows) else rows

    tp_rows = rows_sorted(det[sel & tp], "prediction")
    hal_rows = rows_sorted(det[sel & fp & ~pred_mis], "prediction")
    mis_rows = rows_sorted(det[sel & fp & pred_mis], "prediction")
    gsel = np.flatnonzero((gts.label == k) & counted_gt)
    gsel = rows_sorted(gsel, "groundtruth")
    ps = data.predictions.score
    out = {}
    for t in PR_SCORE_THRESHOLDS:

        def obs(rows: np.ndarray, side: str, mask: np.ndarray) -> dict[str, Any]:
            chosen = rows[mask]
            return {
                "count": int(len(chosen)),
                "examples": [_example(data, side, int(r)) for r in chosen[:max_examples]],
            }

        tp_o = obs(tp_rows, "prediction", ps[tp_rows] >= t)
        hal = obs(hal_rows, "prediction", ps[hal_rows] >= t)
        mis = obs(mis_rows, "prediction", ps[mis_rows] >= t)
        missed_gt = gt_match_score[gsel] < t
        fn_mis = obs(gsel, "groundtruth", missed_gt & (gt_best_cross[gsel] >= t))
        fn_none = obs(gsel, "groundtruth", missed_gt & (gt_best_cross[gsel] < t))
        out[t] = {
            "tp": {"total": tp_o["count"], "observations": {"all": tp_o}},
            "fp": {
                "total": hal["count"] + mis["count"],
                "observations": {"hallucinations": hal, "misclassifications": mis},
            },
            "fn": {
                "total": fn_mis["count"] + fn_none["count"],
                "observations": {"misclassifications": fn_mis, "missed_detections": fn_none},
            },
        }
    return out
