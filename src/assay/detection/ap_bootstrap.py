"""The AP of every bootstrap resample, per IoU threshold and label: the kernel of the AP
interval (:mod:`assay.detection.intervals` says what is resampled and why it is exact).

Per label, the detections in accumulation order are cut into segments ending at every
position that is a TP at some threshold; one sparse product gives each resample's
detections per segment and image, one cumulative sum the running detections at every such
end (shared by the thresholds). Per threshold the running detections are read at its TPs,
less those it ignores (a few crowd matches: a running sum of their images' counts), and the
running TPs are a running sum of the TPs' image counts.

Every array has one row per TP and one column per resample (a whole chunk of them), so the
running sums and the precision envelope go along the rows, one numpy call a row over row
views made once; the rest are whole-array passes. Counts are int32 (exact, and half the
bytes of a float), the recall points reached bytes.

AP is COCO's 101-point read of the precision envelope: each TP's envelope counts once for
every recall point it is the first to reach, those points read from a table of the points
``v`` TPs reach out of ``n`` ground truths for the few distinct ``n`` of the resamples.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.detection.compute import CocoEvaluation

__all__ = ["ROW_ELEMENTS", "ap_statistic"]

F64 = NDArray[np.float64]
I32 = NDArray[np.int32]
EPS = np.spacing(1)
#: Resamples x rows (TPs of one label, or images) of one chunk: about 40 MB of buffers. The
#: row passes pay one numpy call a row, so the more resamples a row holds the cheaper.
ROW_ELEMENTS = 1 << 21


@dataclass(frozen=True)
class _Cell:
    """One (threshold, label): ``at`` its TPs' rows among the label's segment ends, ``tps``
    their image columns (a list: read one at a time); ``ignored`` the image columns of the
    detections this threshold ignores before its last TP (in order), and for each TP from
    ``first`` on, ``before`` the index in ``ignored`` of the last one before it."""

    at: NDArray[np.intp]
    tps: list[int]
    ignored: NDArray[np.intp]
    before: NDArray[np.intp]
    first: int


@dataclass(frozen=True)
class _Label:
    """One label: ``segments`` (U x D, sparse) counts the detections of each image between
    consecutive ends (every position that is a TP at some threshold); a cell a threshold."""

    segments: Any
    cells: list[_Cell]


def _cell(
    pos: NDArray[np.intp], ends: NDArray[np.intp], img: NDArray[np.intp], ignored: NDArray[np.intp]
) -> _Cell:
    """The cell of the TPs at positions ``pos`` (images ``img[pos]``) among the segment
    ``ends``, with the detections ``ignored`` (positions) at this threshold."""
    ignored = ignored[ignored < (pos[-1] if pos.size else -1)]
    before = np.searchsorted(ignored, pos) - 1  # the last ignored detection before a TP
    first = int(np.searchsorted(before, 0)) if ignored.size else pos.size
    at = np.searchsorted(ends, pos)
    return _Cell(at, img[pos].tolist(), img[ignored], before[first:], first)


def _labels(
    ev: CocoEvaluation, t_idx: list[int], col: NDArray[np.intp]
) -> tuple[list[_Label], F64]:
    """Per label, its :class:`_Label` (detections in accumulation order); and (K, D)
    not-ignored ground truths per label and image column (``col``: each datum's)."""
    from scipy import sparse

    data, m = ev.data, ev.matching
    K, D = len(data.labels), data.n_datums
    lab = data.predictions.label[m.det]
    img = col[data.predictions.datum[m.det]].astype(np.intp)
    gts = data.groundtruths
    keep = ~m.gt_ignore[0]
    npig = np.zeros((K, D))
    np.add.at(npig, (gts.label[keep], col[gts.datum[keep]]), 1.0)
    labels = []
    for k in range(K):
        mine = np.flatnonzero(lab == k)
        ik = img[mine]
        valid = ~m.dt_ignore[0][np.ix_(np.asarray(t_idx, dtype=np.intp), mine)]  # (T, dets)
        tps = [np.flatnonzero(m.dtm[0, t, mine] & v) for t, v in zip(t_idx, valid)]
        ends = np.unique(np.concatenate([np.zeros(0, np.intp), *tps]))
        seg = np.searchsorted(ends, np.arange(mine.size), side="left")
        inside = seg < ends.size  # detections after the last end never count
        segments = sparse.csr_matrix(
            (np.ones(int(inside.sum()), np.int32), (seg[inside], ik[inside])), (ends.size, D)
        )
        cells = [_cell(p, ends, ik, np.flatnonzero(~v)) for p, v in zip(tps, valid)]
        labels.append(_Label(segments, cells))
    return labels, npig


def _reached(n: F64, rec_thr: F64) -> tuple[NDArray[Any], NDArray[np.intp]]:
    """COCO's recall points reached, as a flat table and each resample's offset in it: the
    table holds, for each distinct count ``n`` of ground truths among the resamples and
    each TP count ``v = 0 .. max n``, ``#{q: r_q <= v / n}`` with COCO's float division and
    comparison (``r`` ascending, each within a rounding of ``q / (len(r) - 1)``: the count
    is ``floor`` of the scaled recall corrected by the two points next to it)."""
    distinct, which = np.unique(n, return_inverse=True)
    steps = rec_thr.size - 1
    width = int(distinct[-1]) + 1
    nn = np.where(distinct > 0, distinct, 1.0)[:, None]
    x = np.arange(width)[None, :] / nn
    k = np.clip(np.floor(x * steps), 0, steps).astype(np.intp)
    r = np.append(rec_thr, np.inf)
    small = np.min_scalar_type(rec_thr.size)  # counts up to len(r): a byte for COCO's 101
    table = (k + (r[k] <= x) + (r[k + 1] <= x)).astype(small).ravel()
    return table, (which.reshape(-1) * width).astype(np.intp)


class _Work:
    """Buffers for the arrays (TPs, resamples) of every cell, allocated once per chunk of
    resamples (a fresh array of a few MB costs as much in page faults as the passes that
    fill it), with their rows as lists of views: the running sums along the rows are one
    numpy call a row, and a view made once costs less than one made in every call."""

    def __init__(self, rows: int, wi: I32, points: Any) -> None:
        b = self.b = wi.shape[1]
        self.tpc = np.empty(rows * b, np.int32)
        self.total = np.empty(rows * b, np.int32)
        self.env = np.empty(rows * b)
        self.first = np.empty(rows * b, points)
        self.points = np.empty(rows * b, points)  # recall points reached: small integers
        self.w_rows, self.wx_rows = list(wi), list(wi.astype(np.intp))
        self.tpc_rows, self.env_rows = (
            list(self.rows(self.tpc, rows)),
            list(self.rows(self.env, rows)),
        )
        self.points_rows = list(self.rows(self.points, rows))

    def rows(self, buf: NDArray[Any], p: int, dtype: Any = None) -> NDArray[Any]:
        """The first ``p`` rows of ``buf`` (viewed as ``dtype``)."""
        return (buf if dtype is None else buf.view(dtype))[: p * self.b].reshape(p, self.b)

    def running_tps(self, img: list[int], reached: tuple[NDArray[Any], NDArray[np.intp]]) -> None:
        """Each resample's running TPs at the TPs of images ``img`` in ``tpc``, and the
        recall points they reach in ``points`` (read in ``reached``: the table and each
        resample's offset in it, the running TPs plus the offset one row at a time)."""
        w, wx, tpc, points = self.w_rows, self.wx_rows, self.tpc_rows, self.points_rows
        table, offset = reached
        prev, index = tpc[0], offset.copy()
        np.copyto(prev, w[img[0]])
        for i, j in enumerate(img):
            if i:
                prev = np.add(prev, w[j], out=tpc[i])
            np.add(index, wx[j], out=index)
            table.take(index, out=points[i], mode="clip")

    def envelope(self, p: int) -> None:
        """The precision envelope in place in the first ``p`` rows of ``env``: each row the
        maximum of itself and the rows after it."""
        env = self.env_rows
        for i in range(p - 2, -1, -1):
            np.maximum(env[i], env[i + 1], out=env[i])


def _running(counts: Any, wi: I32) -> I32:
    """(rows, b): each resample's running sum over the rows of ``counts @ wi``."""
    out = np.asarray(counts @ wi)
    return np.cumsum(out, axis=0, dtype=np.int32, out=out)


def _cell_ap(
    cell: _Cell, wi: I32, dets: I32, reached: tuple[NDArray[Any], NDArray[np.intp]], work: _Work
) -> F64:
    """Each resample's AP times the number of recall points (columns: resamples) at one
    threshold and label: the precision envelope at each TP weighted by the recall points it
    is the first to reach. After an FP precision only falls until the next TP, and recall
    changes only at TPs, so the counts are read at the TPs only."""
    p = cell.at.size
    if p == 0:
        return np.zeros(work.b)
    work.running_tps(cell.tps, reached)
    tpc = work.rows(work.tpc, p)
    total = dets.take(cell.at, axis=0, out=work.rows(work.total, p), mode="clip")
    if cell.first < p:  # less the ignored detections before each TP
        ignored = np.cumsum(wi.take(cell.ignored, axis=0), axis=0, dtype=np.int32)
        less = ignored.take(
            cell.before, axis=0, out=work.rows(work.env, p - cell.first, np.int32), mode="clip"
        )
        np.subtract(total[cell.first :], less, out=total[cell.first :])
    with np.errstate(divide="ignore", invalid="ignore"):
        env = np.divide(tpc, total, out=work.rows(work.env, p))  # total + eps is total from 2
    for i in range(p):  # running totals only grow: the rows with one below 2 come first
        low = total[i] < 2
        if not low.any():
            break
        env[i, low] = tpc[i, low] / (total[i, low] + EPS)
    work.envelope(p)
    points, first = work.rows(work.points, p), work.rows(work.first, p)
    first[0] = points[0]
    np.subtract(points[1:], points[:-1], out=first[1:])
    return np.einsum("ij,ij->j", env, first)


def ap_statistic(
    ev: CocoEvaluation, t_idx: list[int], zero_division: float | None, col: NDArray[np.intp]
) -> tuple[Callable[[F64], F64], int]:
    """Resample counts over the image columns (b, D) -> (b, T * K): the AP of each
    threshold and label (NaN where the resample has no ground truth of the label, or
    ``zero_division``); ``col``: each datum's image column. And the most rows of one
    resample's arrays (segment ends or images), to size the chunks of resamples."""
    labels, npig = _labels(ev, t_idx, col)
    rows = max([1, *(label.segments.shape[0] for label in labels)])  # the most TPs of a cell
    rec_thr = np.asarray(ev.params.recall_thresholds, dtype=np.float64)
    T, K = len(t_idx), len(ev.data.labels)

    def statistic(w: F64) -> F64:
        n = w @ npig.T  # (b, K)
        wi = np.ascontiguousarray(w.T, dtype=np.int32)  # (D, b): an image's counts in one row
        out = np.empty((T, K, w.shape[0]))
        work = _Work(rows, wi, np.min_scalar_type(rec_thr.size))
        for k, label in enumerate(labels):
            dets = _running(label.segments, wi)
            reached = _reached(n[:, k], rec_thr)
            for ti, cell in enumerate(label.cells):
                out[ti, k] = _cell_ap(cell, wi, dets, reached, work)
        out /= rec_thr.size
        out[np.broadcast_to((n.T == 0)[None], out.shape)] = (
            np.nan if zero_division is None else float(zero_division)
        )
        return out.reshape(T * K, -1).T

    return statistic, max(1, npig.shape[1], rows)
