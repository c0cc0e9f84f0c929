"""COCO run-length encoded (RLE) masks: validate, measure, convert, with safe limits.

A COCO RLE is ``{"size": [h, w], "counts": ...}``: the mask read column by column as
alternating runs of 0s and 1s (the first run is 0s and may be empty). ``counts`` is either
the list of run lengths ("uncompressed") or COCO's compressed string, where each run is a
variable-length number of 6-bit characters (offset by 48; bit 0x20 = "more characters
follow", bit 0x10 of the last character = negative) and, from the third run on, stored as
the difference from the run two places earlier.

Everything assay reads goes through :func:`to_rle` (any COCO segmentation to a compressed
RLE) and :func:`rle_area` (pixel counts), which decode the compressed runs with numpy for
all masks at once (:mod:`assay.io.rle_counts`) and refuse corrupt ones: characters outside
the alphabet, negative runs, or runs that do not add up to ``h * w``. A corrupt RLE handed
to pycocotools' C code can read or write past its buffers; a huge raster crashes its
decoder, so sizes are bounded by
:data:`MAX_RASTER_PIXELS` before anything is decoded. pycocotools calls that take a list
of RLEs are made on chunks of at most :data:`PYCOCOTOOLS_CHUNK` (with numpy 2,
``pycocotools.mask.area`` fails for lists longer than 255; assay computes areas itself).

Example:
    >>> import numpy as np
    >>> m = np.zeros((3, 4), bool); m[1, 1:3] = True
    >>> r = mask_to_rle(m); r["size"], bool((rle_to_mask(r) == m).all())
    ([3, 4], True)
    >>> rle_area([to_rle(r, 3, 4)]).tolist()
    [2.0]
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pycocotools import mask as mask_utils

from assay.errors import InvalidInputError
from assay.io.rle_counts import CorruptRLE, counts_area

__all__ = [
    "MAX_RASTER_PIXELS",
    "PYCOCOTOOLS_CHUNK",
    "check_raster_size",
    "to_rle",
    "rle_area",
    "rle_bbox",
    "rle_iou",
    "decode_rle",
    "mask_to_rle",
    "rle_to_mask",
    "polygon_to_rle",
    "POLYGON_SHAPE",
    "is_polygons",
    "merge_rles",
    "box_to_rle",
]

MAX_RASTER_PIXELS = 1 << 28  # 268,435,456 pixels, e.g. 16384 x 16384
PYCOCOTOOLS_CHUNK = 255


def check_raster_size(
    h: Any, w: Any, *, source: str, record: str | None = None, field: str | None = None
) -> tuple[int, int]:
    """``(h, w)`` as ints if they are a valid raster size of at most MAX_RASTER_PIXELS.

    Example:
        >>> check_raster_size(200000, 200000, source="gt.jsonl")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: gt.jsonl: raster of 200000 x 200000 pixels is larger ...
    """
    for v in (h, w):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise InvalidInputError(
                f"height and width must be non-negative integers, got {v!r}",
                source=source,
                record=record,
                field=field,
            )
    if int(h) * int(w) > MAX_RASTER_PIXELS:
        raise InvalidInputError(
            f"raster of {h} x {w} pixels is larger than assay's limit of "
            f"{MAX_RASTER_PIXELS} pixels (16384 x 16384)",
            source=source,
            record=record,
            field=field,
        )
    return int(h), int(w)


def rle_area(rles: Sequence[dict[str, Any]]) -> NDArray[np.float64]:
    """Pixel counts of compressed COCO RLEs (the runs of 1s added up), validated.

    Equal to ``pycocotools.mask.area``, for any number of masks. Raises :class:`CorruptRLE`
    (with the position of the bad mask) for counts pycocotools could not use
    (:func:`~assay.io.rle_counts.counts_area`).

    Example:
        >>> r = mask_to_rle(np.ones((2, 2), bool))
        >>> rle_area([to_rle(r, 2, 2)] * 300).sum()
        np.float64(1200.0)
    """
    n = len(rles)
    hw = np.array([[int(v) for v in r["size"]] for r in rles], dtype=np.int64).reshape(n, 2)
    return counts_area([r["counts"] for r in rles], hw[:, 0], hw[:, 1])


def to_rle(segm: Any, h: int, w: int, *, owner: str = "image") -> dict[str, Any]:
    """A COCO segmentation (polygons, uncompressed or compressed RLE) as a compressed RLE
    ``{"size": [h, w], "counts": bytes}``, checking its structure.

    The runs of a compressed RLE are checked by :func:`rle_area` (all masks at once).
    Raises :class:`~assay.errors.InvalidInputError` (without a location; callers add it).

    Example:
        >>> to_rle({"size": [2, 2], "counts": [1, 2, 1]}, 2, 2)["counts"]
        b'121'
    """
    if isinstance(segm, list):
        return polygon_to_rle(segm, h, w)
    if not isinstance(segm, dict) or "counts" not in segm or "size" not in segm:
        raise InvalidInputError("must be polygons or an RLE {size, counts}")
    size = segm["size"]
    if not isinstance(size, (list, tuple)) or len(size) != 2 or list(size) != [h, w]:
        shown = list(size) if isinstance(size, (list, tuple)) else size
        raise InvalidInputError(f"mask size {shown!r} differs from the {owner}'s size {[h, w]}")
    counts = segm["counts"]
    if isinstance(counts, list):
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in counts):
            raise InvalidInputError("uncompressed counts must be non-negative integers")
        if sum(counts) != h * w:
            raise InvalidInputError(
                f"runs add up to {sum(counts)} pixels, the size {[h, w]} holds {h * w}"
            )
        return dict(mask_utils.frPyObjects({"size": [h, w], "counts": counts}, h, w))
    if isinstance(counts, str):
        try:
            counts = counts.encode("ascii")
        except UnicodeEncodeError:
            raise InvalidInputError(
                "counts holds a character outside COCO's RLE alphabet"
            ) from None
    if not isinstance(counts, bytes):
        raise InvalidInputError(f"counts must be a string or a list, got {type(counts).__name__}")
    return {"size": [h, w], "counts": counts}


POLYGON_SHAPE = "polygon must be lists of at least 3 (x, y) number pairs"
_NUMBERS = {int, float}


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_polygons(coco_polygons: Any) -> bool:
    """Whether ``coco_polygons`` is COCO's polygon list: a non-empty list of lists of at
    least 6 numbers (3 points), each of even length (finiteness is checked apart).

    Example:
        >>> is_polygons([[0, 0, 4, 0, 4, 4]]), is_polygons([[0, 0, 4, 0]]), is_polygons([])
        (True, False, False)
    """
    return (
        isinstance(coco_polygons, list)
        and len(coco_polygons) > 0
        and all(
            isinstance(p, list)
            and len(p) >= 6
            and len(p) % 2 == 0
            and (set(map(type, p)) <= _NUMBERS or all(map(_is_number, p)))
            for p in coco_polygons
        )
    )


def merge_rles(parts: list[Any]) -> dict[str, Any]:
    """The union of RLEs of one size (``pycocotools.mask.merge``, in chunks; see the module
    docstring), as a plain dict; a single RLE as it is."""
    while len(parts) > 1:
        parts = [
            mask_utils.merge(parts[i : i + PYCOCOTOOLS_CHUNK])
            for i in range(0, len(parts), PYCOCOTOOLS_CHUNK)
        ]
    return dict(parts[0])


def polygon_to_rle(coco_polygons: Any, h: int, w: int) -> dict[str, Any]:
    """Rasterise COCO polygons (``[[x1, y1, x2, y2, ...], ...]``) as pycocotools does."""
    if not is_polygons(coco_polygons):
        raise InvalidInputError(POLYGON_SHAPE)
    if not np.isfinite(
        np.concatenate([np.asarray(p, dtype=np.float64) for p in coco_polygons])
    ).all():
        raise InvalidInputError("polygon coordinates must be finite")
    return merge_rles(mask_utils.frPyObjects(coco_polygons, h, w))


def box_to_rle(box: Sequence[float], h: int, w: int) -> dict[str, Any]:
    """Rasterise one COCO box ``[x, y, w, h]`` at the image size (pycocotools' rule)."""
    return dict(mask_utils.frPyObjects(np.array([box], dtype=np.float64), h, w)[0])


def rle_bbox(rles: Sequence[dict[str, Any]]) -> NDArray[np.float64]:
    """Tight boxes ``[x, y, w, h]`` of compressed RLEs (pycocotools ``toBbox``, chunked)."""
    if len(rles) == 0:
        return np.zeros((0, 4))
    parts = [
        np.asarray(mask_utils.toBbox(list(rles[i : i + PYCOCOTOOLS_CHUNK])), dtype=np.float64)
        for i in range(0, len(rles), PYCOCOTOOLS_CHUNK)
    ]
    return np.concatenate([p.reshape(-1, 4) for p in parts])


def rle_iou(
    dt: Sequence[dict[str, Any]], gt: Sequence[dict[str, Any]], crowd: Sequence[bool]
) -> NDArray[np.float64]:
    """All-pairs mask IoU ``(len(dt), len(gt))`` (pycocotools ``iou``, chunked); a crowd
    ground truth divides by the detection's area instead of the union."""
    out = np.zeros((len(dt), len(gt)))
    c = [int(bool(x)) for x in crowd]
    step = PYCOCOTOOLS_CHUNK
    for i in range(0, len(dt), step):
        for j in range(0, len(gt), step):
            d, g = list(dt[i : i + step]), list(gt[j : j + step])
            m = mask_utils.iou(d, g, c[j : j + step])
            out[i : i + len(d), j : j + len(g)] = np.asarray(m, dtype=np.float64).reshape(
                len(d), len(g)
            )
    return out


def decode_rle(rle: dict[str, Any]) -> NDArray[np.uint8]:
    """``pycocotools.mask.decode`` of one compressed RLE (uint8 ``(h, w)``), size-checked."""
    h, w = (int(v) for v in rle["size"])
    check_raster_size(h, w, source="mask")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*copy keyword.*")
        return np.asarray(mask_utils.decode(rle))


def mask_to_rle(mask: Any) -> dict[str, Any]:
    """Encode a boolean ``(height, width)`` mask as a COCO RLE (counts an ASCII str)."""
    m = np.asfortranarray(np.asarray(mask, dtype=np.uint8))
    if m.ndim != 2:
        raise InvalidInputError(f"mask must be 2-D, got shape {m.shape}", source="mask")
    r = mask_utils.encode(m)
    return {"size": [int(m.shape[0]), int(m.shape[1])], "counts": r["counts"].decode("ascii")}


def rle_to_mask(rle: dict[str, Any]) -> NDArray[np.bool_]:
    """Decode a COCO RLE (compressed or uncompressed counts) to a boolean mask, validated."""
    h, w = check_raster_size(*rle["size"], source="mask")
    r = to_rle(rle, h, w)
    try:
        rle_area([r])
    except CorruptRLE as e:
        raise InvalidInputError(e.reason, source="mask", field="counts") from None
    return decode_rle(r).astype(bool)
