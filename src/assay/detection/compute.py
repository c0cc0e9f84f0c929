"""COCO-exact matching and accumulation, vectorised over every datum at once.

The semantics are those of pycocotools ``COCOeval`` (``evaluateImg`` + ``accumulate``),
reproduced operation for operation where floating point matters:

* detections are ranked per (datum, label) by descending score (stable: ties keep input
  order) and only the first ``max_dets[-1]`` are kept;
* at each IoU threshold ``t`` the detections of a (datum, label) are processed in rank
  order; each takes the still-free ground truth of its label with the highest IoU
  ``>= min(t, 1 - 1e-10)``, preferring non-ignored ground truths (ties: the later one in
  input order, as COCOeval's ``<`` comparison does); a crowd ground truth stays free;
* a ground truth is ignored when it is a crowd region or its area lies outside the area
  range; a detection matched to an ignored ground truth, or unmatched and outside the area
  range, is ignored;
* precision/recall per (label, area range, max detections) over all datums, precision made
  monotone from the right and read at the 101 recall points (``searchsorted`` left).

Instead of COCOeval's per-image Python loops everything runs over all datums at once:

* ranking: a dense score rank and two packed integer sorts (:func:`_rank_detections`);
* matching: groups where no detection has two candidate ground truths (nearly all) are
  solved in closed form for every threshold and area range (:func:`_match_simple`); the
  rest run the greedy loop in *rank steps*, step ``r`` processing the ``r``-th detection of
  every such group for every threshold and area range at once (:func:`_match_general`).
  Within a group the order is COCOeval's, so the result is identical;
* accumulation: per area range, every label and threshold at once from the (sparse)
  matches, with COCOeval's floating-point operations on the same counts
  (:func:`accumulate`, :func:`_cell_precision`).

Example:
    >>> from assay.detection.types import Annotations, DetectionData
    >>> import numpy as np
    >>> gt = Annotations.boxes(datum=[0], label=[0], box=[[0, 0, 10, 10]])
    >>> dt = Annotations.boxes(datum=[0, 0], label=[0, 0], box=[[0, 0, 10, 10], [50, 50, 5, 5]], score=[0.9, 0.8])
    >>> data = DetectionData([1], np.array([100]), np.array([100]), [("class", "a")], gt, dt)
    >>> ev = evaluate(data)
    >>> round(float(ev.stats()[0]), 6)
    1.0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from assay.detection.geometry import box_iou, segm_iou
from assay.detection.types import DetectionData

__all__ = [
    "COCO_IOU_THRESHOLDS",
    "COCO_RECALL_THRESHOLDS",
    "COCO_AREA_RANGES",
    "COCO_MAX_DETS",
    "CocoParams",
    "Matching",
    "CocoEvaluation",
    "pair_ious",
    "match",
    "accumulate",
    "evaluate",
    "summarize",
    "STAT_NAMES",
]

COCO_IOU_THRESHOLDS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
COCO_RECALL_THRESHOLDS = np.linspace(
    0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True
)
COCO_AREA_RANGES: tuple[tuple[str, float, float], ...] = (
    ("all", 0.0, 1e5**2),
    ("small", 0.0, 32.0**2),
    ("medium", 32.0**2, 96.0**2),
    ("large", 96.0**2, 1e5**2),
)
COCO_MAX_DETS: tuple[int, ...] = (1, 10, 100)

# (AP or AR, iou label, area, max dets) of the 12 classic COCO summary numbers
STAT_NAMES: tuple[tuple[str, str, str, int], ...] = (
    ("AP", "0.50:0.95", "all", 100),
    ("AP", "0.50", "all", 100),
    ("AP", "0.75", "all", 100),
    ("AP", "0.50:0.95", "small", 100),
    ("AP", "0.50:0.95", "medium", 100),
    ("AP", "0.50:0.95", "large", 100),
    ("AR", "0.50:0.95", "all", 1),
    ("AR", "0.50:0.95", "all", 10),
    ("AR", "0.50:0.95", "all", 100),
    ("AR", "0.50:0.95", "small", 100),
    ("AR", "0.50:0.95", "medium", 100),
    ("AR", "0.50:0.95", "large", 100),
)


@dataclass
class CocoParams:
    """Evaluation parameters, COCOeval's defaults unless given.

    Attributes:
        iou_type: ``"bbox"`` (boxes) or ``"segm"`` (region geometry).
        iou_thresholds: IoU thresholds ``T`` (default 0.50:0.05:0.95).
        recall_thresholds: the 101 recall points of the interpolated precision.
        area_ranges: ``(name, lo, hi)``; a ground truth with area outside ``[lo, hi]`` is ignored.
        max_dets: detections kept per (datum, label), ascending; matching uses the last.
    """

    iou_type: str = "bbox"
    iou_thresholds: np.ndarray = field(default_factory=lambda: COCO_IOU_THRESHOLDS.copy())
    recall_thresholds: np.ndarray = field(default_factory=lambda: COCO_RECALL_THRESHOLDS.copy())
    area_ranges: tuple[tuple[str, float, float], ...] = COCO_AREA_RANGES
    max_dets: tuple[int, ...] = COCO_MAX_DETS

    def __post_init__(self) -> None:
        if self.iou_type not in ("bbox", "segm"):
            raise ValueError(f"iou_type must be 'bbox' or 'segm', got {self.iou_type!r}")
        self.iou_thresholds = np.asarray(self.iou_thresholds, dtype=np.float64).reshape(-1)
        if (
            len(self.iou_thresholds) == 0
            or ((self.iou_thresholds < 0) | (self.iou_thresholds > 1)).any()
        ):
            raise ValueError("iou_thresholds must be a non-empty list of numbers in [0, 1]")
        self.recall_thresholds = np.asarray(self.recall_thresholds, dtype=np.float64)
        self.max_dets = tuple(sorted(int(m) for m in self.max_dets))
        if not self.max_dets or self.max_dets[0] < 1:
            raise ValueError("max_dets must be positive integers")
        self.area_ranges = tuple((str(n), float(lo), float(hi)) for n, lo, hi in self.area_ranges)


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
        """Matches under area range ``a``: sorted keys ``t * n + position`` and ground-truth rows."""
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


def _argsort_int(key: np.ndarray) -> np.ndarray:
    """Stable argsort of non-negative integer keys.

    When ``key << bits(n) | index`` fits in 63 bits the keys and their indices are packed into
    one int64 and sorted by value with ``np.sort`` (numpy's SIMD sort, several times faster
    than a stable argsort); the index in the low bits makes every value distinct, so the
    result is the stable order. Otherwise ``np.argsort(kind="stable")``.
    """
    n = len(key)
    if n == 0:
        return np.zeros(0, np.int64)
    bits = int(n).bit_length()
    if int(key.min()) >= 0 and int(key.max()) < (1 << (63 - bits)):
        return np.sort((key.astype(np.int64) << bits) | np.arange(n)) & ((1 << bits) - 1)
    return np.argsort(key, kind="stable")


def _rank_detections(
    data: DetectionData, max_det: int, *, with_group: bool = False
) -> tuple[np.ndarray, ...]:
    """Kept detections in accumulation order, with their rank in their (datum, label) group.

    Accumulation order is COCOeval's: by label, descending score, datum order, input order.
    Restricted to one (datum, label) it is exactly COCOeval's per-image order (stable sort by
    descending score), so the rank is the position within the group in that order.

    Scores are replaced by their dense rank ``s`` (descending, one unstable argsort); then two
    integer sorts (:func:`_argsort_int`, ties keep input order): by ``(datum, label, s)`` to
    find each detection's rank and drop ranks ``>= max_det``, and the kept ones by
    ``(label, s, datum)``. Orders are only ever decided by exact score comparisons.
    ``with_group`` also returns each kept detection's group key ``datum * L + label``.
    """
    dts = data.predictions
    n = len(dts)
    if n == 0:
        return (np.zeros(0, np.int64),) * (3 if with_group else 2)
    L, N = max(len(data.labels), 1), max(int(data.n_datums), 1)
    o = np.argsort(-dts.score)
    sv = dts.score[o]
    s = np.empty(n, dtype=np.int64)
    s[o] = np.cumsum(np.r_[False, sv[1:] != sv[:-1]])
    S = int(s[o[-1]]) + 1
    if N * L * S < (1 << 62):
        group = dts.datum * L + dts.label
        by_group = _argsort_int(group * S + s)
        gs = group[by_group]
    else:  # keys too wide for one int64
        by_group = np.lexsort((s, dts.label, dts.datum))
        gs = (dts.datum * L + dts.label)[by_group]
    starts = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
    rank = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    sg = s[by_group]
    if int(rank.max()) >= max_det:
        keep = rank < max_det
        by_group, rank, gs, sg = by_group[keep], rank[keep], gs[keep], sg[keep]
    # by_group: ties (same datum, label, score) still in input order
    datum = gs // L
    label = gs - datum * L
    if N * L * S < (1 << 62):
        order = _argsort_int((label * S + sg) * N + datum)
    else:
        order = np.lexsort((datum, sg, label))
    if with_group:
        return by_group[order], rank[order], gs[order]
    return by_group[order], rank[order]


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


def match(data: DetectionData, params: CocoParams, *, with_gt: bool = False) -> Matching:
    """COCO greedy matching of every (datum, label) at every IoU threshold and area range.

    See the module docstring for the rules. ``Matching.dt_gt`` records which ground truth
    each detection matched (``with_gt`` is kept for compatibility; it is always available).

    Only pairs with IoU ``>=`` the lowest threshold ("candidates") can match. A (datum, label)
    group in which no detection has two candidates is *simple*: there each ground truth is
    taken, at threshold ``t``, by the first detection (in rank order) whose IoU reaches ``t``
    (every such detection when it is a crowd region), whatever the area range, so it is
    solved in closed form (:func:`_match_simple`). The few other groups go through the
    general greedy loop in rank steps (:func:`_match_general`).
    """
    gts, dts = data.groundtruths, data.predictions
    det, rank, group = _rank_detections(
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
            np.isin(group[pd], np.unique(group[several]))
            if len(several)
            else np.zeros(len(pd), bool)
        )
        s = ~general
        key, gt = _match_simple(pd[s], pg[s], iou[s], thr, gts.crowd, n)
        if general.any():
            area_key, area_gt = _match_general(
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


def _match_simple(
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
    o = _argsort_int(pg)
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
    o = _argsort_int(key)
    return key[o], pg[k][o]


def _match_general(
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
    iou_rank = np.unique(iou, return_inverse=True)[1].reshape(-1).astype(np.int64)
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


def accumulate(
    data: DetectionData, m: Matching, params: CocoParams, *, all_precision: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """COCOeval ``accumulate``: precision ``(T, R, K, A, M)`` and recall ``(T, K, A, M)``.

    ``-1`` marks a (label, area, max dets) cell with no non-ignored ground truth (undefined).
    With ``all_precision=False`` precision is computed only for the largest max-dets (the only
    one COCO's summary reads; the other cells are NaN), which saves most of the work.

    All labels and thresholds of one area range are handled at once, from the *matched*
    detections only (a few per ground truth): the detections of a label are contiguous in
    accumulation order, so the counts of true positives, false positives and ignored
    detections up to a true positive follow from its position, running counts over the
    matched entries, and a prefix count of the area-range misses (see :func:`_cell_precision`).
    """
    gts, dts = data.groundtruths, data.predictions
    T, R = len(params.iou_thresholds), len(params.recall_thresholds)
    K, A, M = len(data.labels), len(params.area_ranges), len(params.max_dets)
    precision = -np.ones((T, R, K, A, M))
    recall = -np.ones((T, K, A, M))
    lab = dts.label[m.det]
    n = len(lab)
    dt_out = m.dt_out
    npig = np.zeros((A, K), dtype=np.int64)
    for a in range(A):
        npig[a] = np.bincount(gts.label[~m.gt_ignore[a]], minlength=K)
    rec_thr = params.recall_thresholds
    rank = m.rank
    # per max-dets: the kept detections (rank < max_det) and their positions among the kept
    restrict = {}
    for mi, max_det in enumerate(params.max_dets):
        if max_det < params.max_dets[-1] and (all_precision or mi == M - 1):
            keep = rank < max_det
            restrict[mi] = (keep, np.cumsum(keep) - 1, lab[keep])
    for a in range(A):
        key, gt = m.area_matches(a)  # sorted by threshold, then position
        rows = key // max(n, 1)
        pos = key - rows * n
        tp = ~m.gt_ignore[a][gt]  # else matched to an ignored ground truth
        cell = rows * K + lab[pos]  # (threshold, label) of each match, non-decreasing
        live = npig[a] > 0
        tp_at = np.flatnonzero(tp)
        cell_tp = cell[tp_at]
        rank_tp = rank[pos[tp_at]] if M > 1 else None
        for mi, max_det in enumerate(params.max_dets):
            last = max_det >= params.max_dets[-1]
            counted = cell_tp if last else cell_tp[rank_tp < max_det]
            cnt = np.bincount(counted, minlength=T * K)
            rec = cnt.reshape(T, K) / np.maximum(npig[a], 1)
            recall[:, :, a, mi] = np.where(live[None, :], rec, -1.0)
            if not all_precision and mi < M - 1:
                precision[:, :, :, a, mi] = np.nan
                continue
            if last:
                q = _cell_precision(
                    cell, pos, tp, lab, dt_out[a], cnt, npig[a], T, K, rec_thr, tp_at=tp_at
                )
            else:
                keep, newpos, lab_m = restrict[mi]
                within = rank[pos] < max_det
                q = _cell_precision(
                    cell[within],
                    newpos[pos[within]],
                    tp[within],
                    lab_m,
                    dt_out[a][keep],
                    cnt,
                    npig[a],
                    T,
                    K,
                    rec_thr,
                )
            precision[:, :, :, a, mi] = np.where(live[None, :, None], q, -1.0).transpose(0, 2, 1)
    return precision, recall


def _points_needed(npig: np.ndarray, rec_thr: np.ndarray) -> np.ndarray:
    """Per area row and recall point, the smallest TP count ``c`` with ``c / npig >= r``.

    Evaluated with the same float division COCOeval's ``searchsorted(tp / npig, r)`` performs,
    so "the first detection reaching recall r" is exactly "the c-th true positive".
    """
    n = npig.astype(np.float64)[:, None]
    c = np.maximum(np.floor(rec_thr[None, :] * n) - 1.0, 0.0)
    for _ in range(4):  # at most a step or two past floor(r * npig) - 1
        short = (c / n) < rec_thr[None, :]
        if not short.any():
            break
        c = c + short
    return c.astype(np.int64)


def _cell_precision(
    cell: np.ndarray,
    pos: np.ndarray,
    tp: np.ndarray,
    lab: np.ndarray,
    out: np.ndarray,
    cnt: np.ndarray,
    npig: np.ndarray,
    T: int,
    K: int,
    rec_thr: np.ndarray,
    tp_at: np.ndarray | None = None,
) -> np.ndarray:
    """COCOeval's interpolated precision at the recall points, for every (threshold, label) cell.

    Args:
        cell: ``threshold * K + label`` of each match (non-decreasing).
        pos: its detection's position in accumulation order (ascending within a cell).
        tp: the match is a true positive (else it matched an ignored ground truth).
        lab: label of each detection position (sorted); ``out``: its area is out of range.
        cnt: true positives per cell; ``npig``: non-ignored ground truths per label.
        tp_at: ``np.flatnonzero(tp)``, when the caller has it.

    Returns ``q (T, K, R)``.

    Only true positives are visited: the precision read at a recall point sits on a true
    positive (recall only rises there), and the running maximum from the right is attained on
    a true positive too (between two of them precision only falls). At a true positive at
    position ``p`` of a label whose detections start at ``s``, ``tp`` = the true positives so
    far in the cell, and ``fp`` = the unmatched detections in ``[s, p)`` whose area is in range
    (every other detection is a true positive or ignored) = those in range (a prefix count)
    minus the earlier matches in range. So only true positives and in-range matches are needed.
    The precision is COCOeval's ``tp / (fp + tp + eps)`` on the same counts, so identical.
    The maximum from the right at the recall points is one ``maximum.reduceat`` over the
    blocks between consecutive points and a cumulative maximum over the (at most 101) blocks
    of each cell.
    """
    C, R = T * K, len(rec_thr)
    q = np.zeros((C, R))
    if not cnt.any():
        return q.reshape(T, K, R)
    # per entry, the true positives and the in-range matches earlier in its cell: both running
    # counts in one cumulative sum, packed as ``tp + (in range << 32)`` (no borrow between them)
    packed = tp.astype(np.int64) | ((~out[pos]).astype(np.int64) << 32)
    seen = np.cumsum(packed) - packed
    ccount = np.bincount(cell, minlength=C)
    cfirst = np.cumsum(ccount) - ccount  # first entry of each cell
    tp_at = np.flatnonzero(tp) if tp_at is None else tp_at
    seen = seen[tp_at] - seen[cfirst[cell[tp_at]]]
    tpc = (seen & 0xFFFFFFFF) + 1
    inside_seen = seen >> 32
    pos = pos[tp_at]
    s = np.searchsorted(lab, np.arange(K + 1), "left")[lab[pos]]
    in_prefix = np.zeros(len(out) + 1, dtype=np.int64)
    np.cumsum(~out, out=in_prefix[1:])
    tp_f = tpc.astype(np.float64)
    fp_f = (in_prefix[pos] - in_prefix[s] - inside_seen).astype(np.float64)
    pr = np.r_[tp_f / (fp_f + tp_f + np.spacing(1)), 0.0]
    # the c-th true positive of a cell reaches recall point r; points beyond cnt are not reached
    c = _points_needed(np.maximum(npig, 1), rec_thr)[np.arange(C) % K]  # (C, R)
    first = np.cumsum(cnt) - cnt
    end = (first + cnt)[:, None]
    reach = (c <= cnt[:, None]) & (cnt[:, None] > 0)
    bounds = np.concatenate(
        [np.where(reach, first[:, None] + np.maximum(c - 1, 0), end), end], axis=1
    )
    block = np.maximum.reduceat(pr, bounds.reshape(-1)).reshape(C, R + 1)
    block[:, :R][~reach] = 0.0
    block[:, R] = 0.0
    q = np.maximum.accumulate(block[:, ::-1], axis=1)[:, ::-1][:, :R]
    q[~reach] = 0.0
    return q.reshape(T, K, R)


def summarize(precision: np.ndarray, recall: np.ndarray, params: CocoParams) -> np.ndarray:
    """The 12 COCO summary numbers (COCOeval ``summarize``); -1 where nothing is defined.

    Needs an area range named all/small/medium/large and max dets 1, 10, 100 (COCO's
    defaults); a cell that does not exist gives -1 as in COCOeval.
    """
    names = [a[0] for a in params.area_ranges]
    stats = np.full(len(STAT_NAMES), -1.0)
    for i, (kind, iou_lbl, area, md) in enumerate(STAT_NAMES):
        aind = [j for j, nm in enumerate(names) if nm == area]
        mind = [j for j, x in enumerate(params.max_dets) if x == md]
        s = precision if kind == "AP" else recall
        if iou_lbl != "0.50:0.95":
            t = np.where(float(iou_lbl) == params.iou_thresholds)[0]
            s = s[t]
        s = s[:, :, :, aind, mind] if kind == "AP" else s[:, :, aind, mind]
        if s.size and (s > -1).any():
            stats[i] = float(np.mean(s[s > -1]))
    return stats


@dataclass
class CocoEvaluation:
    """Everything :func:`evaluate` computed: parameters, matching, precision and recall arrays."""

    data: DetectionData
    params: CocoParams
    matching: Matching
    precision: np.ndarray
    recall: np.ndarray

    def stats(self) -> np.ndarray:
        """The 12 COCO summary numbers, as COCOeval ``stats``."""
        return summarize(self.precision, self.recall, self.params)

    def per_label_ap(self, area: str = "all", max_det: int | None = None) -> np.ndarray:
        """AP averaged over IoU thresholds per label (``-1`` where undefined), COCO style."""
        a = [x[0] for x in self.params.area_ranges].index(area)
        mi = (
            len(self.params.max_dets) - 1
            if max_det is None
            else self.params.max_dets.index(max_det)
        )
        p = self.precision[:, :, :, a, mi]
        out = np.full(p.shape[2], -1.0)
        for k in range(p.shape[2]):
            s = p[:, :, k]
            if (s > -1).any():
                out[k] = float(np.mean(s[s > -1]))
        return out


def evaluate(
    data: DetectionData, params: CocoParams | None = None, *, all_precision: bool = True
) -> CocoEvaluation:
    """Match and accumulate: the numbers behind COCOeval's ``stats`` and every AP/AR metric.

    ``all_precision=False`` skips the precision arrays of the smaller max-dets (see
    :func:`accumulate`); the 12 summary numbers are unchanged.

    Example:
        >>> ev = evaluate(DetectionData([1], np.array([0]), np.array([0]), [("class", "a")],
        ...     __import__("assay.detection.types").detection.types.Annotations.empty(),
        ...     __import__("assay.detection.types").detection.types.Annotations.empty()))
        >>> ev.stats().tolist() == [-1.0] * 12
        True
    """
    params = params or CocoParams()
    m = match(data, params)
    precision, recall = accumulate(data, m, params, all_precision=all_precision)
    return CocoEvaluation(data, params, m, precision, recall)
