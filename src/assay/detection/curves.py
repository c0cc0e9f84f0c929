"""Precision-recall curves of detections at fixed score thresholds, plain and detailed.

At one IoU threshold, detections are matched as COCO does (:mod:`assay.detection.match`);
then, for each score threshold ``s`` in 0.05, 0.10, ..., 0.95 and each label::

    tp = matched detections scoring >= s       fp = unmatched detections scoring >= s
    fn = ground truths (not crowd) - tp
    precision = tp / (tp + fp)    recall = tp / (tp + fn)    F1 = 2 tp / (2 tp + fp + fn)

A prediction of a label that does not occur among a datum's ground truths is a false
positive. Ratios go through :mod:`assay.ratios`: a zero denominator gives ``None`` (F1
also wherever precision or recall is undefined), or ``zero_division`` when given.

The detailed curve splits the counts: an FP is a *misclassification* when a ground truth of
the same label key but another value overlaps it with IoU >= the threshold, else a
*hallucination*; an FN is a *misclassification* when a prediction of the same key and
another value scoring >= s overlaps it, else a *missed detection*. Each observation comes
with up to ``max_examples`` examples ``{datum, annotation, geometry}``.

Example:
    >>> from assay.detection.jsonl import parse_datums
    >>> from assay.detection.params import CocoParams
    >>> box = {"label": "cat", "box": [0, 0, 10, 10]}
    >>> data = parse_datums([{"uid": "a", "annotations": [box]}],
    ...                     [{"uid": "a", "annotations": [{**box, "score": 0.7}]}])
    >>> rec = pr_curves(data, CocoParams(iou_thresholds=[0.5], max_dets=(100,)), [0], 1,
    ...                 ["PrecisionRecallCurve"])[0]
    >>> rec.value["cat"][0.5]["tp"], rec.value["cat"][0.8]["f1_score"]
    (1, None)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from assay.detection import records
from assay.detection.geometry import box_iou, segm_iou
from assay.detection.match import match
from assay.detection.params import CocoParams
from assay.detection.types import DetectionData
from assay.io.geometry import POLYGON, RASTER
from assay.io.labels import natural_key
from assay.ratios import precision_recall_f1, value_or_none
from assay.results import Metric
from assay.thresholds import PR_CURVE_SCORE_THRESHOLDS

__all__ = ["PR_SCORE_THRESHOLDS", "pr_curves", "geometry_json"]

#: The precision-recall curves' score grid, shared with classification.
PR_SCORE_THRESHOLDS = PR_CURVE_SCORE_THRESHOLDS


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
    key_names = sorted({k for k, _ in data.labels})  # any fixed order works here
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


def pr_curves(
    data: DetectionData,
    params: CocoParams,
    order: list[int],
    max_examples: int,
    wanted: list[str],
    zero_division: float | None = None,
) -> list[Metric]:
    """``PrecisionRecallCurve`` (and ``DetailedPrecisionRecallCurve`` when wanted) records,
    one per label key, at the single IoU threshold of ``params``; labels in ``order``."""
    detailed = "DetailedPrecisionRecallCurve" in wanted
    m = match(data, params)
    thr = float(params.iou_thresholds[0])
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
    keys = sorted({k for k, _ in data.labels}, key=natural_key)
    simple: dict[str, dict[str, Any]] = {k: {} for k in keys}
    detail: dict[str, dict[str, Any]] = {k: {} for k in keys}
    if detailed:
        ctx = _DetailContext.build(
            data, params.iou_type, thr, m, score, tp, fp, counted_gt, max_examples
        )
    for k in order:
        key, value = data.labels[k]
        sel = lab == k
        simple[key][value] = _curve(
            score[sel & tp], score[sel & fp], int(npig[k]), ths, zero_division
        )
        if detailed:
            detail[key][value] = ctx.label(k, sel)
    out: list[Metric] = []
    for key in keys:
        if "PrecisionRecallCurve" in wanted:
            out.append(
                records.pr_curve(
                    simple[key], label_key=key, iou_threshold=thr, zero_division=zero_division
                )
            )
        if detailed:
            out.append(
                records.detailed_pr_curve(
                    detail[key], label_key=key, iou_threshold=thr, max_examples=max_examples
                )
            )
    return out


def _curve(
    tp_scores: np.ndarray, fp_scores: np.ndarray, n_gt: int, ths: np.ndarray, zd: float | None
) -> dict[float, dict[str, Any]]:
    """Counts and ratios at each score threshold: TP and FP with score >= t, FN = n - TP."""
    s_tp, s_fp = np.sort(tp_scores), np.sort(fp_scores)
    n_tp = len(s_tp) - np.searchsorted(s_tp, ths, "left")
    n_fp = len(s_fp) - np.searchsorted(s_fp, ths, "left")
    n_fn = n_gt - n_tp
    precision, recall, f1 = precision_recall_f1(n_tp, n_fp, n_fn, zd)
    return {
        t: {
            "tp": int(n_tp[i]),
            "fp": int(n_fp[i]),
            "fn": int(n_fn[i]),
            "precision": value_or_none(precision[i]),
            "recall": value_or_none(recall[i]),
            "f1_score": value_or_none(f1[i]),
        }
        for i, t in enumerate(PR_SCORE_THRESHOLDS)
    }


@dataclass
class _DetailContext:
    """What the detailed curve of every label needs, computed once."""

    data: DetectionData
    det: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    pred_mis: np.ndarray
    gt_best_cross: np.ndarray
    gt_match_score: np.ndarray
    counted_gt: np.ndarray
    max_examples: int

    @classmethod
    def build(cls, data, iou_type, thr, m, score, tp, fp, counted_gt, max_examples):  # type: ignore[no-untyped-def]
        pred_mis, gt_best_cross = _cross_label_hits(data, iou_type, thr, m.det)
        # the score of the detection that matched each ground truth (-inf if none)
        gt_match_score = np.full(len(data.groundtruths), -np.inf)
        hit = m.dt_gt[0, 0] >= 0
        gt_match_score[m.dt_gt[0, 0][hit]] = score[hit]
        return cls(
            data, m.det, tp, fp, pred_mis, gt_best_cross, gt_match_score, counted_gt, max_examples
        )

    def _sorted(self, rows: np.ndarray, side: str) -> np.ndarray:
        """Deterministic example order: datum order, then annotation row."""
        a = self.data.predictions if side == "prediction" else self.data.groundtruths
        return rows[np.lexsort((rows, a.datum[rows]))] if len(rows) else rows

    def _obs(self, rows: np.ndarray, side: str, mask: np.ndarray) -> dict[str, Any]:
        chosen = rows[mask]
        examples = [_example(self.data, side, int(r)) for r in chosen[: self.max_examples]]
        return {"count": int(len(chosen)), "examples": examples}

    def label(self, k: int, sel: np.ndarray) -> dict[float, Any]:
        """``{score threshold: {tp, fp, fn}}`` of label ``k`` (``sel``: its kept detections)."""
        gts, det = self.data.groundtruths, self.det
        tp_rows = self._sorted(det[sel & self.tp], "prediction")
        hal_rows = self._sorted(det[sel & self.fp & ~self.pred_mis], "prediction")
        mis_rows = self._sorted(det[sel & self.fp & self.pred_mis], "prediction")
        gsel = self._sorted(np.flatnonzero((gts.label == k) & self.counted_gt), "groundtruth")
        ps = self.data.predictions.score
        out = {}
        for t in PR_SCORE_THRESHOLDS:
            tp_o = self._obs(tp_rows, "prediction", ps[tp_rows] >= t)
            hal = self._obs(hal_rows, "prediction", ps[hal_rows] >= t)
            mis = self._obs(mis_rows, "prediction", ps[mis_rows] >= t)
            missed = self.gt_match_score[gsel] < t
            cross = self.gt_best_cross[gsel] >= t
            fn_mis = self._obs(gsel, "groundtruth", missed & cross)
            fn_none = self._obs(gsel, "groundtruth", missed & ~cross)
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
