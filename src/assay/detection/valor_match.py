"""valor-lite's matching rule, as an option (``matching="valor"``) beside COCO's.

COCO (assay's default): at each IoU threshold a detection, in score order, takes the free
ground truth of its label with the highest IoU among those reaching the threshold, so when
its best ground truth is already taken it may take the next best. valor-lite pairs each
prediction once with its single best ground truth of the same label (highest IoU; the first
in input order on ties), and at threshold ``t`` a ground truth is matched by the first
prediction, in score order, whose best ground truth it is with IoU ``>= t``; a prediction
whose best ground truth is taken is a false positive even when another one is free.
valor-lite also drops predictions scoring ``<= 1e-9`` (neither TP nor FP); here they are
ignored the same way. Crowd regions (which valor-lite lacks) are never used up.

Example (two ground truths side by side, two predictions; at IoU 0.1 COCO lets the second
prediction take the ground truth its better match left free, valor-lite does not):
    >>> from assay.detection.jsonl import parse_datums
    >>> from assay.detection.params import CocoParams
    >>> g = [{"label": "a", "box": [0, 0, 10, 10]}, {"label": "a", "box": [8, 0, 18, 10]}]
    >>> p = [{"label": "a", "score": 0.9, "box": [0, 0, 10, 10]},
    ...      {"label": "a", "score": 0.8, "box": [1, 0, 11, 10]}]
    >>> data = parse_datums([{"uid": "x", "annotations": g}], [{"uid": "x", "annotations": p}])
    >>> params = CocoParams(iou_thresholds=[0.1], area_ranges=(("all", 0, 1e10),),
    ...                     max_dets=(100,))
    >>> from assay.detection.match import match
    >>> match(data, params).dtm[0, 0].tolist(), valor_matching(data, params).dtm[0, 0].tolist()
    ([True, True], [True, False])
"""

from __future__ import annotations

import numpy as np

from assay.detection.match import Matching, match, pair_ious
from assay.detection.params import CocoParams
from assay.detection.rank import argsort_int
from assay.detection.types import DetectionData

__all__ = ["EPSILON", "valor_matching", "matching_for"]
#: valor-lite's epsilon: IoUs and scores at or below it do not count.
EPSILON = 1e-9


def valor_matching(data: DetectionData, params: CocoParams) -> Matching:
    """A :class:`Matching` (area range all only) made with valor-lite's rule."""
    base = match(data, params)
    det, n = base.det, len(base.det)
    thr = params.iou_thresholds
    gts, dts = data.groundtruths, data.predictions
    pd, pg, iou = pair_ious(data, det, params.iou_type)
    zero = dts.score[det] <= EPSILON
    live = (iou >= EPSILON) & ~zero[pd]
    pd, pg, iou = pd[live], pg[live], iou[live]
    o = np.lexsort((-iou, pd))  # stable: ground-truth input order on equal IoU
    pd, pg, iou = pd[o], pg[o], iou[o]
    first = _starts(pd)
    pd, pg, iou = pd[first], pg[first], iou[first]  # each detection's best ground truth
    keys, rows = [], []
    for ti, t in enumerate(thr):
        c = iou >= min(t, 1 - 1e-10)
        cp, cg = pd[c], pg[c]
        o = argsort_int(cg)  # stable: positions (score order) ascending within a ground truth
        cp, cg = cp[o], cg[o]
        lead = _starts(cg) | gts.crowd[cg]
        keys.append(ti * n + cp[lead])
        rows.append(cg[lead])
    key = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    gt = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    o = np.argsort(key, kind="stable")
    empty = np.zeros(0, np.int64)
    return Matching(
        det=det,
        rank=base.rank,
        gt_ignore=base.gt_ignore,
        dt_out=base.dt_out | zero[None, :],
        n_thresholds=len(thr),
        key=key[o].astype(np.int64),
        gt=gt[o].astype(np.int64),
        area_key=empty,
        area_gt=empty,
    )


def _starts(x: np.ndarray) -> np.ndarray:
    """True where a run of equal values in ``x`` begins (empty for an empty ``x``)."""
    out = np.ones(len(x), dtype=bool)
    out[1:] = x[1:] != x[:-1]
    return out


def matching_for(name: str, data: DetectionData, params: CocoParams) -> Matching:
    """The matching named ``name`` (``"coco"`` or ``"valor"``)."""
    return valor_matching(data, params) if name == "valor" else match(data, params)
