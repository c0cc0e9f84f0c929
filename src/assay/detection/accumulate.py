"""COCOeval's accumulation: precision and recall arrays from the matches.

For each (IoU threshold, label, area range, max detections) cell, detections are taken
over all datums in accumulation order (descending score). With ``tp`` and ``fp`` the running
counts of true and false positives (ignored detections count as neither) and ``n`` the
ground truths that are not ignored::

    precision_i = tp_i / (tp_i + fp_i + eps)        recall_i = tp_i / n
    q(r) = max over i with recall_i >= r of precision_i     (r = 0, 0.01, ..., 1; 0 if none)

``q`` is the interpolated precision read at the 101 recall points, AP the mean of ``q``, and
the cell's recall is the final ``tp / n``. A cell with ``n = 0`` is undefined (``-1``, as in
COCOeval). The floating-point operations are COCOeval's, on the same counts, so the arrays
are identical.

Example:
    >>> import numpy as np
    >>> from assay.detection.match import match
    >>> from assay.detection.params import CocoParams
    >>> from assay.detection.types import Annotations, DetectionData
    >>> gt = Annotations.boxes(datum=[0], label=[0], box=[[0, 0, 10, 10]])
    >>> dt = Annotations.boxes(datum=[0], label=[0], box=[[0, 0, 10, 10]], score=[0.9])
    >>> data = DetectionData([1], np.array([0]), np.array([0]), [("class", "a")], gt, dt)
    >>> p = CocoParams(iou_thresholds=[0.5])
    >>> precision, recall = accumulate(data, match(data, p), p)
    >>> float(recall[0, 0, 0, -1]), round(float(precision[0, :, 0, 0, -1].mean()), 12)
    (1.0, 1.0)
"""

from __future__ import annotations

import numpy as np

from assay.detection.match import Matching
from assay.detection.params import STAT_NAMES, CocoParams
from assay.detection.types import DetectionData
from assay.ratios import divide

__all__ = ["accumulate", "summarize"]


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
    # filled one contiguous (T, R, K) block per (area, max-dets) cell, laid out as COCO's
    # (T, R, K, A, M) once at the end (one copy instead of twelve strided writes)
    cells = np.empty((A, M, T, R, K))
    recall = -np.ones((T, K, A, M))
    lab = dts.label[m.det]
    # per max-dets: the kept detections (rank < max_det) and their positions among the kept
    restrict = {}
    for mi, max_det in enumerate(params.max_dets):
        if max_det < params.max_dets[-1] and (all_precision or mi == M - 1):
            keep = m.rank < max_det
            restrict[mi] = (keep, np.cumsum(keep) - 1, lab[keep])
    for a in range(A):
        npig = np.bincount(gts.label[~m.gt_ignore[a]], minlength=K)
        _accumulate_area(
            m,
            a,
            lab,
            npig,
            params,
            restrict,
            all_precision,
            cells[a],
            recall[..., a, :],
        )
    return np.ascontiguousarray(cells.transpose(2, 3, 4, 0, 1)), recall


def _accumulate_area(
    m: Matching,
    a: int,
    lab: np.ndarray,
    npig: np.ndarray,
    params: CocoParams,
    restrict: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]],
    all_precision: bool,
    precision: np.ndarray,
    recall: np.ndarray,
) -> None:
    """Fill ``precision (M, T, R, K)`` and ``recall (T, K, M)`` of area range ``a`` in place.

    ``npig`` holds each label's ground truths that are not ignored in this area range.
    """
    T, K, M = len(params.iou_thresholds), len(npig), len(params.max_dets)
    n = len(lab)
    key, gt = m.area_matches(a)  # sorted by threshold, then position
    rows = key // max(n, 1)
    pos = key - rows * n
    tp = ~m.gt_ignore[a][gt]  # else matched to an ignored ground truth
    cell = rows * K + lab[pos]  # (threshold, label) of each match, non-decreasing
    dead = npig == 0
    tp_at = np.flatnonzero(tp)
    cell_tp = cell[tp_at]
    rank_tp = m.rank[pos[tp_at]]
    # per label and recall point: the count of true positives that reaches it (at least 1:
    # recall 0 reads the first), shared by every threshold and max-dets
    # (minus one: the true positive's index in its cell), and a last column past every cell
    need = np.maximum(_points_needed(np.maximum(npig, 1), params.recall_thresholds), 1) - 1
    need = np.concatenate([need, np.full((K, 1), len(m.det) * T + 1)], axis=1)
    for mi, max_det in enumerate(params.max_dets):
        last = max_det >= params.max_dets[-1]
        counted = cell_tp if last else cell_tp[rank_tp < max_det]
        cnt = np.bincount(counted, minlength=T * K)
        rec = divide(cnt.reshape(T, K), npig[None, :])  # NaN where n = 0
        recall[:, :, mi] = np.where(dead[None, :], -1.0, rec)
        if not all_precision and mi < M - 1:
            precision[mi] = np.nan
            continue
        if last:
            _cell_precision(cell, pos, tp, lab, m.dt_out[a], cnt, npig, need, precision[mi], tp_at)
        else:
            keep, newpos, lab_m = restrict[mi]
            w = m.rank[pos] < max_det
            out = m.dt_out[a][keep]
            _cell_precision(
                cell[w], newpos[pos[w]], tp[w], lab_m, out, cnt, npig, need, precision[mi]
            )
        precision[mi][:, :, dead] = -1.0


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
    need: np.ndarray,
    q: np.ndarray,
    tp_at: np.ndarray | None = None,
) -> None:
    """COCOeval's interpolated precision at the recall points, for every (threshold, label)
    cell, written into ``q (T, R, K)``.

    Args:
        cell: ``threshold * K + label`` of each match (non-decreasing).
        pos: its detection's position in accumulation order (ascending within a cell).
        tp: the match is a true positive (else it matched an ignored ground truth).
        lab: label of each detection position (sorted); ``out``: its area is out of range.
        cnt: true positives per cell; ``npig``: non-ignored ground truths per label.
        need: ``(K, R + 1)``, the true positives that reach each recall point (at least 1)
            minus one, then a number past every cell.
        tp_at: ``np.flatnonzero(tp)``, when the caller has it.

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
    of each cell; a point no true positive reaches reads 0, as in COCOeval.
    """
    T, R, K = q.shape
    C = T * K
    if not cnt.any():
        q[...] = 0.0
        return
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
    # true positive ``need`` of a cell (cells in order, true positives in order within a cell,
    # ``first`` where each cell starts) reaches the recall point, if the cell has that many
    first = (np.cumsum(cnt) - cnt).reshape(T, K, 1)
    end = first + cnt.reshape(T, K, 1)
    reach = need[:, :R] < cnt.reshape(T, K, 1)  # (T, K, R); True on a prefix of the points
    # where each point's block starts, then the cell's end (``need`` ends with a column past
    # any cell, so the minimum puts the end there, and at the points not reached)
    bounds = np.add(first, need)
    np.minimum(bounds, end, out=bounds)
    block = np.maximum.reduceat(pr, bounds.reshape(-1)).reshape(T, K, R + 1)
    block[..., :R] *= reach  # precision >= 0: exact zeros where no true positive reaches
    block[..., R] = 0.0
    np.maximum.accumulate(block[..., ::-1], axis=-1, out=block[..., ::-1])
    q[...] = block[..., :R].transpose(0, 2, 1)


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
