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

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.errors import InvalidInputError
from assay.io.geometry import check_box
from assay.io.masks import MAX_RASTER_PIXELS, check_raster_size, rle_area, to_rle
from assay.io.rle_counts import CorruptRLE

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
    for i, (segm, h, w) in enumerate(zip(segms, heights.tolist(), widths.tolist())):
        counts = segm.get("counts") if type(segm) is dict else None
        if type(counts) is str and counts.isascii() and segm.get("size") == [h, w]:
            rles[i] = {"size": [h, w], "counts": counts.encode()}  # the common case, inline
            continue
        try:
            if segm is None:
                raise InvalidInputError("missing segmentation")
            rles[i] = to_rle(segm, h, w)
        except InvalidInputError as e:
            raise InvalidInputError(
                e.reason, source=source, record=record(i), field="segmentation"
            ) from None
    try:
        area = rle_area(list(rles))
    except CorruptRLE as e:
        raise InvalidInputError(
            f"corrupt RLE: {e.reason}", source=source, record=record(e.index), field="segmentation"
        ) from None
    return rles, area
