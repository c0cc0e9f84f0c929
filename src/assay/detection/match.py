"""COCO greedy matching of detections to ground truths, vectorised over every datum.

The rules are COCOeval's (``evaluateImg``): at each IoU threshold ``t`` the detections of a
(datum, label) are processed in rank order; each takes the still-free ground truth of its
label with the highest IoU ``>= min(t, 1 - 1e-10)``, preferring ground truths that are not
ignored (on equal IoU the later one in input order); a crowd ground truth is never used
up. A ground truth is ignored when it is a crowd region or its area lies outside the area
range; a detection matched to an ignored ground truth, or unmatched and outside the area
range, is ignored.

Only pairs whose IoU reaches the lowest threshold ("candidates") can match. In a (datum,
label) group where no detection has two candidates (nearly all groups), a ground truth is
taken at ``t`` by its first detection (rank order) whose IoU reaches ``t``, whatever the
area range: :func:`match_simple` solves that in closed form. The other groups run the
greedy loop in *rank steps*: step ``r`` processes the ``r``-th detection of every such group
for every threshold and area range at once (:func:`match_general`). Within a group the
order is COCOeval's, so the result is identical.

Example:
    >>> import numpy as np
    >>> from assay.detection.params import CocoParams
    >>> from assay.detection.types import Annotations, DetectionData
    >>> gt = Annotations.boxes(datum=[0], label=[0], box=[[0, 0, 10, 10]])
    >>> dt = Annotations.boxes(datum=[0, 0], label=[0, 0], box=[[0, 0, 10, 10], [0, 0, 10, 9]],
    ...                        score=[0.9, 0.8])
    >>> data = DetectionData([1], np.array([0]), np.array([0]), [("class", "a")], gt, dt)
    >>> m = match(data, CocoParams(iou_thresholds=[0.5]))
    >>> m.dtm[0, 0].tolist()  # the first detection takes the ground truth, the second is left
    [True, False]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from assay.detection.geometry import box_iou, segm_iou
from assay.detection.params import CocoParams
from assay.detection.rank import argsort_int, rank_detections
from assay.detection.types import DetectionData

__all__ = ["Matching", "pair_ious", "match", "match_simple", "match_general"]


@dataclass
class Matching:
    """Result of :func:`match` for the kept detections, stored sparsely (matches only).

    Attributes:
        det: rows of ``data.predictions`` kept (rank < max_dets[-1]), in accumulation order
            (by label, descending score, datum order, rank).
        rank: rank of each kept detection within its (datum, label) group.
        gt_ignore: ``(A, G)`` bool, COCO's ``gtIgnore`` (crowd or area out of range).
        dt_out: ``(A, n)`` bool, the detection's area lies outside the area range.
        n_thresholds: ``T``.
        key, gt: matches that hold in every area range, as sorted keys ``t * n + position``
            and the matched ground-truth rows.
        area_key, area_gt: the other matches, keys ``(a * T + t) * n + position`` (sorted).

    The dense COCOeval arrays are derived on first access: ``dtm`` and ``dt_ignore``
    (``(A, T, n)`` bool, COCO's ``dtMatches > 0`` and ``dtIgnore``) and ``dt_gt``
    (``(A, T, n)`` int64 row of the matched ground truth, -1 if none).
    """

    det: np.ndarray
    rank: np.ndarray
    gt_ignore: np.ndarray
    dt_out: np.ndarray
    n_thresholds: int
    key: np.ndarray
    gt: np.ndarray
    area_key: np.ndarray
    area_gt: np.ndarray

    def area_matches(self, a: int) -> tuple[np.ndarray, np.ndarray]:
        """Matches under area range ``a``: sorted keys ``t * n + position``, ground-truth rows."""
        span = len(self.det) * self.n_thresholds
        lo, hi = np.searchsorted(self.area_key, [a * span, (a + 1) * span])
        if lo == hi:
            return self.key, self.gt
        extra = self.area_key[lo:hi] - a * span
        at = np.searchsorted(self.key, extra)  # the two sets never share a key: merge by insertion
        return np.insert(self.key, at, extra), np.insert(self.gt, at, self.area_gt[lo:hi])

    @cached_property
    def dt_gt(self) -> np.ndarray:
        A, n = self.dt_out.shape
        out = np.full((A, self.n_thresholds * n), -1, dtype=np.int64)
        for a in range(A):
            key, gt = self.area_matches(a)
            out[a, key] = gt
        return out.reshape(A, self.n_thresholds, n)

    @cached_property
    def dtm(self) -> np.ndarray:
        return self.dt_gt >= 0

    @cached_property
    def dt_ignore(self) -> np.ndarray:
        matched_ignored = (
            np.take_along_axis(
                self.gt_ignore, np.maximum(self.dt_gt, 0).reshape(len(self.gt_ignore), -1), axis=1
            ).reshape(self.dt_gt.shape)
            if self.gt_ignore.shape[1]
            else False
        )
        return np.where(self.dtm, matched_ignored, self.dt_out[:, None, :])


def pair_ious(
    data: DetectionData, det: np.ndarray, iou_type: str, *, group: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All (detection, ground truth) pairs of the same datum and label, with their IoU.

    Args:
        data: the dataset.
        det: prediction rows to pair (any order).
        iou_type: ``"bbox"`` or ``"segm"``.
        group: ``datum * len(labels) + label`` of ``det``, when the caller has it.

    Returns:
        ``(pair_det, pair_gt, iou)``: positions into ``det``, ground-truth rows, IoUs. The pairs
        of each detection are contiguous and in ground-truth input order.
    """
    gts, dts = data.groundtruths, data.predictions
    L = max(len(data.labels), 1)
    gkey = gts.datum * L + gts.label
    gorder = np.argsort(gkey, kind="stable")
    gsorted = gkey[gorder]
    dkey = dts.datum[det] * L + dts.label[det] if group is None else group
    space = data.n_datums * L
    if space <= 4 * (len(gkey) + len(dkey)) + (1 << 20):  # dense group table: O(n) lookups
        gcount = np.bincount(gkey, minlength=space)
        lo = (np.cumsum(gcount) - gcount)[dkey]
        cnt = gcount[dkey]
    else:
        lo = np.searchsorted(gsorted, dkey, "left")
        cnt = np.searchsorted(gsorted, dkey, "right") - lo
    total = int(cnt.sum())
    pd = np.repeat(np.arange(len(det)), cnt)
    off = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    pg = gorder[np.repeat(lo, cnt) + off]
    drow = det[pd]
    if iou_type == "bbox":
        iou = box_iou(dts.box[drow], gts.box[pg], gts.crowd[pg])
    else:
        iou = segm_iou(dts, gts, drow, pg)
    return pd, pg, iou


def match(data: DetectionData, params: CocoParams) -> Matching:
    """COCO greedy matching of every (datum, label) at every IoU threshold and area range.

    See the module docstring for the rules. ``Matching.dt_gt`` records which ground truth
    each detection matched.

    Only pairs with IoU ``>=`` the lowest threshold ("candidates") can match. A (datum, label)
    group in which no detection has two candidates is *simple*: there each ground truth is
    taken, at threshold ``t``, by the first detection (in rank order) whose IoU reaches ``t``
    (every such detection when it is a crowd region), whatever the area range, so it is
    solved in closed form (:func:`match_simple`). The few other groups go through the
    general greedy loop in rank steps (:func:`match_general`).
    """
    gts, dts = data.groundtruths, data.predictions
    det, rank, group = rank_detections(
        data, params.max_dets[-1], with_group=True
    )  # in accumulation order
    n = len(det)
    thr = np.minimum(params.iou_thresholds, 1 - 1e-10)
    T = len(thr)
    lo = np.array([a[1] for a in params.area_ranges])[:, None]
    hi = np.array([a[2] for a in params.area_ranges])[:, None]
    gt_ignore = gts.crowd[None, :] | (gts.area[None, :] < lo) | (gts.area[None, :] > hi)
    area = dts.area[det][None, :]
    dt_out = (area < lo) | (area > hi)
    key = gt = area_key = area_gt = np.zeros(0, np.int64)
    pd, pg, iou = pair_ious(data, det, params.iou_type, group=group)
    live = iou >= thr.min()
    pd, pg, iou = pd[live], pg[live], iou[live]
    if len(pd):
        several = np.flatnonzero(
            np.bincount(pd, minlength=n) >= 2
        )  # detections with >= 2 candidates
        general = (
            np.isin(group[pd], _distinct(group[several]))
            if len(several)
            else np.zeros(len(pd), bool)
        )
        s = ~general
        key, gt = match_simple(pd[s], pg[s], iou[s], thr, gts.crowd, n)
        if general.any():
            area_key, area_gt = match_general(
                pd[general], pg[general], iou[general], rank, thr, gts.crowd, gt_ignore, n
            )
    return Matching(
        det=det,
        rank=rank,
        gt_ignore=gt_ignore,
        dt_out=dt_out,
        n_thresholds=T,
        key=key,
        gt=gt,
        area_key=area_key,
        area_gt=area_gt,
    )


def _distinct(x: np.ndarray) -> np.ndarray:
    """The distinct values of ``x``, sorted (``np.unique`` without its masked-array import)."""
    x = np.sort(x)
    return x[np.r_[True, x[1:] != x[:-1]]] if len(x) else x


def _dense_rank(x: np.ndarray) -> np.ndarray:
    """Each value's position among the distinct values of ``x`` (``np.unique``'s inverse)."""
    o = np.argsort(x, kind="stable")
    v = x[o]
    out = np.empty(len(x), np.int64)
    out[o] = np.cumsum(np.r_[False, v[1:] != v[:-1]]) if len(x) else out[o]
    return out


def match_simple(
    pd: np.ndarray,
    pg: np.ndarray,
    iou: np.ndarray,
    thr: np.ndarray,
    crowd: np.ndarray,
    n: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Closed-form matching of the candidate pairs of groups where each detection has one candidate.

    With one candidate per detection the greedy choice never depends on the other ground
    truths (nor on the area range): a ground truth ``g`` is taken at threshold ``t`` by the
    first of its detections (rank order) with IoU ``>= t``. With ``b`` = the number of
    thresholds a pair's IoU reaches (thresholds sorted, ``j < b`` met) and ``p`` = the largest
    ``b`` among the earlier detections of the same ground truth, the pair matches exactly at
    the sorted thresholds ``p <= j < b`` (``0 <= j < b`` for a crowd region, never used up).
    ``p`` is one segmented running maximum on the integers ``segment * (T + 1) + b``.

    ``pd`` must be ascending within each ground truth's pairs (accumulation order restricted to
    a (datum, label) group is rank order), which the stable sort by ``pg`` preserves.

    Returns the matches as sorted keys ``t * n + pd`` (a detection matches at most one ground
    truth per threshold, so keys are unique) and their ground-truth rows.
    """
    if len(pd) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    T = len(thr)
    t_order = np.argsort(thr, kind="stable")
    b = np.zeros(len(iou), dtype=np.int64)  # sorted thresholds met: j < b
    for t in thr:
        b += iou >= t
    o = argsort_int(pg)
    pd, pg, b = pd[o], pg[o], b[o]
    start = np.r_[True, pg[1:] != pg[:-1]]
    offset = (np.cumsum(start) - 1) * (T + 1)
    running = np.maximum.accumulate(offset + b)
    p = np.where(start, 0, np.r_[0, running[:-1]] - offset)  # best b of the earlier detections
    p[crowd[pg]] = 0
    cnt = np.maximum(b - p, 0)
    k = np.repeat(np.arange(len(pd)), cnt)  # one entry per (pair, matched threshold)
    j = t_order[p[k] + np.arange(len(k)) - np.repeat(np.cumsum(cnt) - cnt, cnt)]
    key = j * n + pd[k]
    o = argsort_int(key)
    return key[o], pg[k][o]


def match_general(
    pd: np.ndarray,
    pg: np.ndarray,
    iou: np.ndarray,
    rank: np.ndarray,
    thr: np.ndarray,
    crowd: np.ndarray,
    gt_ignore: np.ndarray,
    n: int,
) -> tuple[np.ndarray, np.ndarray]:
    """COCOeval's greedy loop in rank steps, for the candidate pairs of the remaining groups.

    Step ``r`` handles the ``r``-th detection of every such group, for every threshold and area
    range at once. COCOeval's choice for a detection is one integer maximum over its pairs of
    ``(regular GT first, then the highest IoU, then the later GT on ties)`` = ``(regular bit,
    exact IoU rank, position)``. Returns sorted keys ``(a * T + t) * n + pd`` and ground-truth rows.
    """
    (A, G), T = gt_ignore.shape, len(thr)
    prank = rank[pd]
    o = np.argsort(prank, kind="stable")  # pairs of one detection stay contiguous, in GT order
    pd, pg, iou, prank = pd[o], pg[o], iou[o], prank[o]
    new_seg = np.r_[True, pd[1:] != pd[:-1]]
    idx = np.arange(len(pd))
    pos = idx - np.maximum.accumulate(np.where(new_seg, idx, 0))
    pos_bits = max(1, int(pos.max()).bit_length())
    iou_rank = _dense_rank(iou)
    base = (iou_rank << pos_bits) | pos
    regular = np.int64(1) << (pos_bits + max(1, int(iou_rank.max()).bit_length()))
    steps = np.flatnonzero(np.r_[True, prank[1:] != prank[:-1], True])
    # state and per-pair arrays are laid out pair-major, (P, A, T): the per-detection
    # reductions then run over the first axis with contiguous inner loops
    matched = np.zeros((G, A, T), dtype=bool)
    ignore_ga = np.ascontiguousarray(gt_ignore.T)  # (G, A)
    keys, rows = [], []
    for a0, a1 in zip(steps[:-1], steps[1:]):
        a_i, t_i, d, g = _match_step(
            pd[a0:a1],
            pg[a0:a1],
            iou[a0:a1],
            base[a0:a1],
            regular,
            (1 << pos_bits) - 1,
            thr,
            crowd,
            ignore_ga,
            matched,
        )
        keys.append((a_i * T + t_i) * n + d)
        rows.append(g)
    key, gt = np.concatenate(keys), np.concatenate(rows)
    o = np.argsort(key)
    return key[o], gt[o]


def _match_step(
    pd: np.ndarray,
    pg: np.ndarray,
    iou: np.ndarray,
    base: np.ndarray,
    regular: np.int64,
    pos_mask: int,
    thr: np.ndarray,
    crowd: np.ndarray,
    ignore_ga: np.ndarray,
    matched: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One rank step: at most one detection per (datum, label) group, all pairs of them.

    ``matched`` is ``(G, A, T)`` (updated) and ``ignore_ga`` ``(G, A)``. Returns the matches
    as ``(area index, threshold index, detection position, ground-truth row)``.
    """
    seg_start = np.flatnonzero(np.r_[True, pd[1:] != pd[:-1]])
    free = ~matched[pg]  # (P, A, T): still free ...
    free |= crowd[pg][:, None, None]  # ... a crowd region always is ...
    free &= (iou[:, None] >= thr[None, :])[:, None, :]  # ... and close enough
    ig = ignore_ga[pg]  # (P, A)
    key = np.where(ig, base[:, None], base[:, None] + regular)  # (P, A)
    val = np.where(free, key[:, :, None], -1)
    best = np.maximum.reduceat(val, seg_start, axis=0)  # (S, A, T)
    s_i, a_i, t_i = np.nonzero(best >= 0)
    p_i = seg_start[s_i] + (best[s_i, a_i, t_i] & pos_mask)
    g, d = pg[p_i], pd[p_i]
    matched[g, a_i, t_i] = True
    return a_i, t_i, d, g
