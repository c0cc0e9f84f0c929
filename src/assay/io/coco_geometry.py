"""COCO geometry, validated: ``bbox`` lists as a box array, ``segmentation`` as RLEs.

A box is ``[x, y, width, height]``: four numbers, finite, with a non-negative size and a
finite far corner and area. A segmentation (polygons, an uncompressed or a compressed RLE)
is rasterised or re-encoded at its image's size, which must be known and within
:data:`~assay.io.masks.MAX_RASTER_PIXELS`; its area is its pixel count. Errors name the
file, the record (through a ``record(i)`` callback) and the field.

Example:
    >>> coco_boxes([[0, 0, 2, 3]], source="dt.json", record=str).tolist()
    [[0.0, 0.0, 2.0, 3.0]]
    >>> coco_boxes([[0, 0, -1, 3]], source="dt.json", record=lambda i: f"annotation {i}")
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: dt.json: annotation 0: field 'bbox': bbox [0, 0, -1, 3]: ...
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np
from numpy.typing import NDArray
from pycocotools import mask as mask_utils

from assay.errors import InvalidInputError
from assay.io.coco_columns import MaskRLE, RLEColumns
from assay.io.geometry import check_box
from assay.io.jsonfiles import paused_gc
from assay.io.masks import (
    MAX_RASTER_PIXELS,
    POLYGON_SHAPE,
    check_raster_size,
    is_polygons,
    merge_rles,
    to_rle,
)
from assay.io.native import kernels
from assay.io.rle_counts import CorruptRLE, counts_area, joined_area

__all__ = ["coco_boxes", "coco_rles"]


def _not_a_box(b: Any) -> bool:
    return (
        not isinstance(b, (list, tuple))
        or len(b) != 4
        or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in b)
    )


def _shown(box: Any) -> list[Any]:
    """A box as the file wrote it (integral floats of an array shown as integers)."""
    return [int(v) if float(v).is_integer() else float(v) for v in box]


def coco_boxes(
    boxes: Sequence[Any],
    *,
    source: str,
    record: Callable[[int], str],
    typed: bool = False,
) -> NDArray[np.float64]:
    """``(n, 4)`` float boxes ``[x, y, w, h]``; each finite, non-negative in size, with a
    finite corner and area. ``record(i)`` names box ``i`` in errors. ``typed``: the boxes
    were decoded as 4-tuples of numbers already (msgspec), so only their values are checked."""
    n = len(boxes)
    if isinstance(boxes, np.ndarray):  # (n, 4) numbers already: only their values are checked
        typed, arr = True, boxes.astype(np.float64).reshape(n, 4)
    bad_at = None if typed else next((i for i, b in enumerate(boxes) if _not_a_box(b)), None)
    if not isinstance(boxes, np.ndarray):
        arr = np.zeros((0, 4))
    if bad_at is None and not isinstance(boxes, np.ndarray):
        try:
            flat = itertools.chain.from_iterable(boxes)
            arr = np.fromiter(flat, dtype=np.float64, count=4 * n).reshape(n, 4)
        except (TypeError, ValueError):
            bad_at = next((i for i, b in enumerate(boxes) if _not_a_box(b)), 0)
    if bad_at is not None:
        raise InvalidInputError(
            f"bbox must be [x, y, width, height] numbers, got {boxes[bad_at]!r}",
            source=source,
            record=record(bad_at),
            field="bbox",
        )
    with np.errstate(over="ignore", invalid="ignore"):
        x, y, w, h = arr.T
        finite = np.isfinite(arr).all(axis=1) & np.isfinite(x + w) & np.isfinite(y + h)
        finite &= np.isfinite(w * h)
    bad = np.flatnonzero(~finite | (arr[:, 2] < 0) | (arr[:, 3] < 0))
    if len(bad):
        i = int(bad[0])
        why = check_box(*(float(v) for v in arr[i])) or "is unusable"
        raise InvalidInputError(
            f"bbox {_shown(boxes[i]) if isinstance(boxes, np.ndarray) else list(boxes[i])}: {why}",
            source=source,
            record=record(i),
            field="bbox",
        )
    return arr


def coco_rles(
    segms: Sequence[Any],
    heights: NDArray[np.int64],
    widths: NDArray[np.int64],
    *,
    source: str,
    record: Callable[[int], str],
) -> tuple[NDArray[Any], NDArray[np.float64]]:
    """Compressed RLEs of COCO segmentations (at each one's image size) and their areas.

    An RLE's counts are bytes, or the text read when ``segms`` are
    :class:`~assay.io.coco_columns.RLEColumns` (pycocotools takes either); the masks of one
    image size then share one ``size`` list.

    Every mask is validated (structure, size, runs); ``record(i)`` names segmentation ``i``.
    """
    n = len(segms)
    rles = np.empty(n, dtype=object)
    sizes = np.asarray(heights, np.int64) * np.asarray(widths, np.int64)
    bad = np.flatnonzero((sizes == 0) | (sizes > MAX_RASTER_PIXELS))
    if len(bad):
        i = int(bad[0])
        if sizes[i] == 0:
            raise InvalidInputError(
                "a mask needs the image's height and width",
                source=source,
                record=record(i),
                field="segmentation",
            )
        check_raster_size(
            heights[i], widths[i], source=source, record=record(i), field="segmentation"
        )
    hl, wl = heights.tolist(), widths.tolist()

    def fail(i: int, reason: str) -> NoReturn:
        raise InvalidInputError(reason, source=source, record=record(i), field="segmentation")

    if isinstance(segms, RLEColumns) and not (
        np.array_equal(segms.size[:, 0], heights) and np.array_equal(segms.size[:, 1], widths)
    ):
        segms = segms.as_dicts()  # the loop below names the first mask of another size
    if isinstance(segms, RLEColumns):  # compressed RLEs at their image's size: checked at once
        try:
            area = segms.area  # measured while the file was scanned, at these same sizes
            if area is None or np.isnan(area).any():
                area = joined_area(segms.data, segms.ends, heights, widths)
        except CorruptRLE as e:
            fail(e.index, f"corrupt RLE: {e.reason}")
        with paused_gc():  # a dict per mask: no collection passes over them meanwhile
            rles[:] = segms.rles(_size_lists(hl, wl))
        return rles, area
    polygons = _valid_polygon_rows(segms)  # checked at once (else one by one below)
    rows = range(n) if not polygons else [i for i, s in enumerate(segms) if type(s) is not list]
    for i in rows:
        segm, h, w = segms[i], hl[i], wl[i]
        if type(segm) is MaskRLE:
            segm = segm.as_dict()
        text = segm.get("counts") if type(segm) is dict else None
        if type(text) is str and text.isascii() and segm.get("size") == [h, w]:
            rles[i] = {"size": [h, w], "counts": text.encode()}  # the common case, inline
            continue
        try:
            if type(segm) is list:  # rasterised below, all at once
                if not is_polygons(segm):
                    raise InvalidInputError(POLYGON_SHAPE)
                polygons.append(i)
                continue
            if segm is None:
                raise InvalidInputError("missing segmentation")
            rles[i] = to_rle(segm, h, w)
        except InvalidInputError as e:
            earlier = polygons[: bisect.bisect_left(polygons, i)]
            _check_finite(earlier, segms, fail)  # an earlier problem is named first
            fail(i, e.reason)
    area = np.full(n, np.nan)  # NaN: not measured yet
    if polygons:
        _check_finite(polygons, segms, fail)
        area[polygons] = _rasterise(polygons, segms, hl, wl, rles)
    rest = np.flatnonzero(np.isnan(area))
    if len(rest):
        area[rest] = _area(
            [rles[i]["counts"] for i in rest.tolist()],
            heights[rest],
            widths[rest],
            lambda j, reason: fail(int(rest[j]), reason),
        )
    return rles, area


def _valid_polygon_rows(segms: Sequence[Any]) -> list[int]:
    """The rows whose segmentation is a list, when every one of them is a valid polygon list
    (checked at once: lists of lists of at least 6 numbers, of even length); else none (then
    each row is checked alone, and the first problem named)."""
    rows = [i for i, s in enumerate(segms) if type(s) is list]
    if not rows:
        return []
    lists = [segms[i] for i in rows]
    if not all(lists):
        return []
    flat = list(itertools.chain.from_iterable(lists))
    if set(map(type, flat)) != {list}:
        return []
    lens = np.fromiter(map(len, flat), np.int64, len(flat))
    if (lens < 6).any() or (lens % 2).any():
        return []
    if not set(map(type, itertools.chain.from_iterable(flat))) <= {int, float}:
        return []
    return rows


def _size_lists(hl: list[int], wl: list[int]) -> list[list[int]]:
    """``[h, w]`` of every mask; the masks of one image size share one list."""
    if hl and hl.count(hl[0]) == len(hl) and wl.count(wl[0]) == len(wl):
        return [[hl[0], wl[0]]] * len(hl)  # one image size (the common case)
    shared: dict[tuple[int, int], list[int]] = {}
    return [shared.setdefault(k, list(k)) for k in zip(hl, wl)]


def _area(
    counts: Sequence[str | bytes],
    heights: NDArray[np.int64],
    widths: NDArray[np.int64],
    fail: Callable[[int, str], NoReturn],
) -> NDArray[np.float64]:
    try:
        return counts_area(counts, heights, widths)
    except CorruptRLE as e:
        fail(e.index, f"corrupt RLE: {e.reason}")


def _check_finite(
    rows: list[int], segms: Sequence[Any], fail: Callable[[int, str], NoReturn]
) -> None:
    """Name the first of segmentations ``rows`` (polygons) with a coordinate that is not
    finite."""
    if not rows:
        return
    polys = [p for i in rows for p in segms[i]]
    owner = np.repeat(rows, [len(segms[i]) for i in rows])
    ends = np.cumsum([len(p) for p in polys])
    xy = np.fromiter(itertools.chain.from_iterable(polys), dtype=np.float64, count=int(ends[-1]))
    bad = ~np.isfinite(xy)
    if bad.any():
        fail(int(owner[np.searchsorted(ends, np.argmax(bad), "right")]),
             "polygon coordinates must be finite")  # fmt: skip


def _rasterise(
    rows: list[int], segms: Sequence[Any], hl: list[int], wl: list[int], rles: NDArray[Any]
) -> NDArray[np.float64]:
    """Rasterise the polygons of segmentations ``rows`` (checked) into ``rles``, as
    pycocotools does: one call per image size, then a merge per multi-polygon mask. Returns
    their pixel counts where the kernels measured them (NaN elsewhere)."""
    polys = [p for i in rows for p in segms[i]]
    owner = np.repeat(rows, [len(segms[i]) for i in rows])
    key = np.asarray(hl, np.int64)[owner] * (1 << 32) + np.asarray(wl, np.int64)[owner]
    parts: list[Any] = [None] * len(polys)
    part_area = np.full(len(polys), np.nan)
    sizes = np.sort(key)  # the distinct image sizes (np.unique would import numpy.ma: 15 ms)
    distinct = sizes[np.r_[True, sizes[1:] != sizes[:-1]]].tolist()
    for k in distinct:
        at = np.flatnonzero(key == k).tolist() if len(distinct) > 1 else range(len(polys))
        group = [polys[j] for j in at] if len(distinct) > 1 else polys
        got, measured = _polygon_rles(group, k >> 32, k & 0xFFFFFFFF)
        for j, r in zip(at, got):
            parts[j] = r
        if measured is not None:
            part_area[np.asarray(at, np.int64)] = measured
    counts = np.fromiter(map(len, map(segms.__getitem__, rows)), np.int64, len(rows))
    if (counts == 1).all():  # one polygon each (the common case): its RLE as it is
        rles[np.asarray(rows, np.int64)] = parts
        return part_area
    start = 0
    for i, c in zip(rows, counts.tolist()):
        rles[i] = merge_rles(parts[start : start + c])
        start += c
    return np.where(counts == 1, part_area[np.cumsum(counts) - counts], np.nan)


def _polygon_rles(polys: list[Any], h: int, w: int) -> tuple[list[Any], Any]:
    """One RLE per polygon at ``h x w``, as ``pycocotools.mask.frPyObjects`` makes them, and
    their pixel counts: by the compiled kernels when built (the same runs; tested against
    pycocotools), else by pycocotools (counts None: measured later)."""
    k = kernels()
    got = None
    if k is not None and polys:
        n = np.fromiter(map(len, polys), dtype=np.int64, count=len(polys)) // 2
        xy = np.fromiter(itertools.chain.from_iterable(polys), np.float64, int(2 * n.sum()))
        got = k.rasterise_polygons(xy, np.cumsum(n), h, w)
    if got is None:
        return list(mask_utils.frPyObjects(polys, h, w)), None
    counts, ends, areas = got
    dicts = k.rle_dicts(counts, ends, [[h, w]] * len(polys))  # one size list, shared
    return dicts, np.frombuffer(areas, np.float64)
