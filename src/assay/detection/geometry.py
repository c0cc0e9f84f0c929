"""Geometry: IoU between boxes, polygons and rasters, vectorised over pairs.

Every function takes *pairs*: row ``i`` of the detection side is compared with row ``i``
of the ground-truth side. For a COCO crowd ground truth the denominator is the
detection's own area instead of the union (``iscrowd`` semantics of pycocotools).

Kinds and conversions (see ``docs/detection.md``):

* box - box: closed form, the same floating-point operations as pycocotools' ``bbIou``,
  so the values are bit-identical.
* raster - raster: pycocotools ``maskUtils.iou`` on the RLEs (exact pixel counts).
  The mask codec itself (RLE in and out, areas, bounds) lives in :mod:`assay.io.masks`.
* polygon/box - polygon/box: exact areas with shapely 2 (``shapely.intersection`` over
  arrays of geometries).
* raster - polygon/box: the raster is converted to the exact polygon it covers (the union of
  its pixel squares), as the spec asks, then shapely.

Example:
    >>> import numpy as np
    >>> box_iou(np.array([[0., 0, 10, 10]]), np.array([[5., 0, 10, 10]]), np.array([False]))
    array([0.33333333])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from pycocotools import mask as mask_utils

from assay.detection.types import Annotations
from assay.io.geometry import BOX, POLYGON, RASTER
from assay.io.masks import (
    PYCOCOTOOLS_CHUNK,
    decode_rle,
    rle_bbox,
    rle_iou,
)
from assay.io.native import kernels

if TYPE_CHECKING:  # shapely loads with the first polygon: box-only runs never need it
    import shapely

__all__ = [
    "box_iou",
    "box_iou_matrix",
    "segm_iou",
    "raster_to_polygon",
]


def box_iou(dt: np.ndarray, gt: np.ndarray, crowd: np.ndarray) -> np.ndarray:
    """IoU of paired COCO boxes ``[x, y, w, h]``: ``i / (a_dt + a_gt - i)``, or ``i / a_dt`` for
    a crowd ground truth.

    Uses the exact operation order of pycocotools ``bbIou`` so results are bit-identical.

    Example:
        >>> box_iou(np.array([[0., 0, 2, 2]]), np.array([[1., 1, 2, 2]]), np.array([True]))
        array([0.25])
    """
    dx, dy, dw, dh = dt[:, 0], dt[:, 1], dt[:, 2], dt[:, 3]
    gx, gy, gw, gh = gt[:, 0], gt[:, 1], gt[:, 2], gt[:, 3]
    w = np.minimum(dw + dx, gw + gx) - np.maximum(dx, gx)
    h = np.minimum(dh + dy, gh + gy) - np.maximum(dy, gy)
    inter = w * h
    da = dw * dh
    union = np.where(crowd, da, da + gw * gh - inter)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = inter / union
    return np.where((w > 0) & (h > 0), out, 0.0)


def box_iou_matrix(dt: np.ndarray, gt: np.ndarray, crowd: np.ndarray | None = None) -> np.ndarray:
    """All-pairs box IoU, shape ``(len(dt), len(gt))``.

    Example:
        >>> box_iou_matrix(np.array([[0., 0, 2, 2]]), np.array([[0., 0, 2, 2], [2., 2, 1, 1]]))
        array([[1., 0.]])
    """
    nd, ng = len(dt), len(gt)
    crowd = np.zeros(ng, bool) if crowd is None else np.asarray(crowd, bool)
    di = np.repeat(np.arange(nd), ng)
    gi = np.tile(np.arange(ng), nd)
    return box_iou(dt[di], gt[gi], crowd[gi]).reshape(nd, ng)


def raster_to_polygon(rle: dict[str, Any]) -> shapely.Geometry:
    """The exact region a raster covers: the union of its pixel squares, as a shapely geometry.

    Pixel ``(row r, column c)`` is the square ``[c, c+1] x [r, r+1]``; runs of set pixels in a
    column become one rectangle before the union, so the cost grows with the number of runs.

    Example:
        >>> import numpy as np
        >>> m = np.zeros((4, 4), bool); m[1:3, 1:3] = True
        >>> from assay.io.masks import mask_to_rle
        >>> r = mask_to_rle(m)
        >>> raster_to_polygon({"size": r["size"], "counts": r["counts"].encode()}).area
        4.0
    """
    import shapely

    mask = decode_rle(rle).astype(bool)
    h, w = mask.shape
    padded = np.zeros((h + 2, w), dtype=np.int8)
    padded[1:-1] = mask
    d = np.diff(padded, axis=0)  # +1 at run start (row index), -1 after run end
    # column-major scan: (column, row) of run starts and of run ends, paired in order
    col, r0 = np.nonzero(d.T == 1)
    _, r1 = np.nonzero(d.T == -1)
    rects = shapely.box(col.astype(float), r0.astype(float), col + 1.0, r1.astype(float))
    if len(rects) == 0:
        return shapely.Polygon()
    return shapely.union_all(rects)


def _to_shapely(
    kind: np.ndarray, box: np.ndarray, polygons: np.ndarray, rles: np.ndarray
) -> np.ndarray:
    import shapely

    out = np.empty(len(kind), dtype=object)
    b = kind == BOX
    if b.any():
        bb = box[b]
        out[b] = shapely.box(bb[:, 0], bb[:, 1], bb[:, 0] + bb[:, 2], bb[:, 1] + bb[:, 3])
    p = kind == POLYGON
    out[p] = polygons[p]
    for i in np.flatnonzero(kind == RASTER):
        out[i] = raster_to_polygon(rles[i])
    return out


def tight_bounds(
    kind: np.ndarray, box: np.ndarray, polygons: np.ndarray, rles: np.ndarray
) -> np.ndarray:
    """Tight ``[x, y, w, h]`` of each geometry (the box itself for BOX rows)."""
    import shapely

    out = box.astype(np.float64, copy=True)
    p = np.flatnonzero(kind == POLYGON)
    if len(p):
        b = shapely.bounds(polygons[p])
        out[p] = np.column_stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]])
    r = np.flatnonzero(kind == RASTER)
    if len(r):
        out[r] = rle_bbox(list(rles[r]))
    return out


def segm_iou(dts: Annotations, gts: Annotations, di: np.ndarray, gi: np.ndarray) -> np.ndarray:
    """IoU of region geometries (instance segmentation) for pairs ``(dts[di], gts[gi])``, any
    mix of kinds.

    Raster-raster pairs use one pycocotools call per datum (which skips pairs whose tight
    boxes do not overlap itself); other pairs use shapely on the geometries (rasters
    converted to their exact pixel polygon once per row), once their tight boxes overlap.
    Crowd ground truths divide by the detection's area.
    """
    n = len(di)
    out = np.zeros(n)
    if n == 0:
        return out
    dk, gk = dts.kind[di], gts.kind[gi]
    rr = (dk == RASTER) & (gk == RASTER)
    idx = np.flatnonzero(rr)
    if len(idx):
        out[idx] = _rle_pair_iou(
            dts.rles, gts.rles, gts.crowd, di[idx], gi[idx], dts.datum[di[idx]]
        )
    idx = np.flatnonzero(~rr)
    if len(idx) == 0:
        return out
    dtb = tight_bounds(dts.kind, dts.box, dts.polygons, dts.rles)[di[idx]]
    gtb = tight_bounds(gts.kind, gts.box, gts.polygons, gts.rles)[gi[idx]]
    w = np.minimum(dtb[:, 0] + dtb[:, 2], gtb[:, 0] + gtb[:, 2]) - np.maximum(dtb[:, 0], gtb[:, 0])
    h = np.minimum(dtb[:, 1] + dtb[:, 3], gtb[:, 1] + gtb[:, 3]) - np.maximum(dtb[:, 1], gtb[:, 1])
    idx = idx[(w > 0) & (h > 0)]
    if len(idx):
        import shapely  # loaded only when some pair is not raster - raster

        ud, dinv = np.unique(di[idx], return_inverse=True)
        ug, ginv = np.unique(gi[idx], return_inverse=True)
        a = _to_shapely(dts.kind[ud], dts.box[ud], dts.polygons[ud], dts.rles[ud])[dinv]
        b = _to_shapely(gts.kind[ug], gts.box[ug], gts.polygons[ug], gts.rles[ug])[ginv]
        inter = shapely.area(shapely.intersection(a, b))
        aa = shapely.area(a)
        union = np.where(gts.crowd[gi[idx]], aa, aa + shapely.area(b) - inter)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[idx] = np.where(union > 0, inter / union, 0.0)
    return out


def _local(rows: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct ``rows`` ordered by (group, row), where each group's run starts, and the
    position of every entry among them."""
    u, inv = np.unique(rows, return_inverse=True)
    ugroup = np.zeros(len(u), group.dtype)
    ugroup[inv] = group
    order = np.lexsort((u, ugroup))
    pos = np.empty(len(u), np.int64)
    pos[order] = np.arange(len(u))
    starts = np.searchsorted(ugroup[order], np.unique(group))
    return u[order], starts, pos[inv.reshape(-1)]


def _rle_pair_iou(
    dt_rles: np.ndarray,
    gt_rles: np.ndarray,
    gt_crowd: np.ndarray,
    di: np.ndarray,
    gi: np.ndarray,
    group: np.ndarray,
) -> np.ndarray:
    """Raster pair IoUs: the compiled kernel (:mod:`assay.io.native`: each mask decoded once,
    only the pairs asked for), else pycocotools: one all-pairs call per group (datum) of
    pairs, over the detections and ground truths that the group's pairs hold."""
    k = kernels()
    if k is not None:
        order = np.lexsort((di, group))
        got = k.rle_pair_iou(
            dt_rles.tolist(),
            gt_rles.tolist(),
            np.ascontiguousarray(di[order], np.int64),
            np.ascontiguousarray(gi[order], np.int64),
            np.ascontiguousarray(group[order], np.int64),
            np.ascontiguousarray(gt_crowd, np.uint8),
        )
        if got is not None:
            out = np.empty(len(di))
            out[order] = np.frombuffer(got, np.float64)
            return out
    out = np.zeros(len(di))
    ud, dstart, dpos = _local(di, group)
    ug, gstart, gpos = _local(gi, group)
    order = np.argsort(group, kind="stable")
    pstart = np.searchsorted(group[order], np.unique(group))
    dl, gl = dt_rles[ud].tolist(), gt_rles[ug].tolist()
    crowd = gt_crowd[ug].astype(np.uint8)
    dend = np.append(dstart[1:], len(ud)).tolist()
    gend = np.append(gstart[1:], len(ug)).tolist()
    pend = np.append(pstart[1:], len(order)).tolist()
    step = PYCOCOTOOLS_CHUNK
    for d0, d1, g0, g1, p0, p1 in zip(
        dstart.tolist(), dend, gstart.tolist(), gend, pstart.tolist(), pend
    ):
        seg = order[p0:p1]
        if d1 - d0 <= step and g1 - g0 <= step:  # one pycocotools call
            m = np.asarray(mask_utils.iou(dl[d0:d1], gl[g0:g1], crowd[g0:g1]))
            m = m.reshape(d1 - d0, g1 - g0)
        else:
            m = rle_iou(dl[d0:d1], gl[g0:g1], crowd[g0:g1].tolist())
        out[seg] = m[dpos[seg] - d0, gpos[seg] - g0]
    return out
