"""COCO run-length encoded (RLE) masks: validate, measure, convert, with safe limits.

A COCO RLE is ``{"size": [h, w], "counts": ...}``: the mask read column by column as
alternating runs of 0s and 1s (the first run is 0s and may be empty). ``counts`` is either
the list of run lengths ("uncompressed") or COCO's compressed string, where each run is a
variable-length number of 6-bit characters (offset by 48; bit 0x20 = "more characters
follow", bit 0x10 of the last character = negative) and, from the third run on, stored as
the difference from the run two places earlier.

Everything assay reads goes through :func:`to_rle` (any COCO segmentation to a compressed
RLE) and :func:`rle_area` (pixel counts), which decode the compressed runs with numpy for
all masks at once and refuse corrupt ones: characters outside the alphabet, negative runs,
or runs that do not add up to ``h * w``. A corrupt RLE handed to pycocotools' C code can
read or write past its buffers; a huge raster crashes its decoder, so sizes are bounded by
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

__all__ = [
    "MAX_RASTER_PIXELS",
    "PYCOCOTOOLS_CHUNK",
    "CorruptRLE",
    "check_raster_size",
    "to_rle",
    "rle_area",
    "rle_bbox",
    "rle_iou",
    "decode_rle",
    "mask_to_rle",
    "rle_to_mask",
    "polygon_to_rle",
    "box_to_rle",
]

MAX_RASTER_PIXELS = 1 << 28  # 268,435,456 pixels, e.g. 16384 x 16384
PYCOCOTOOLS_CHUNK = 255


class CorruptRLE(InvalidInputError):
    """An RLE that cannot be a mask of its size; ``index`` is its position in the list."""

    def __init__(self, reason: str, index: int) -> None:
        super().__init__(reason)
        self.index = index


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


def _runs(
    counts: Sequence[bytes],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Decode compressed counts: the run lengths, each run's RLE and its position in it.

    Raises CorruptRLE for a character outside COCO's alphabet, an unfinished last run, or
    a run longer than 7 characters (more than 35 bits).
    """
    n = len(counts)
    lens = np.fromiter(map(len, counts), dtype=np.int64, count=n)
    raw = np.frombuffer(b"".join(counts), dtype=np.uint8)
    bad = (raw < 48) | (raw > 111)
    if bad.any():
        owner_at = int(np.searchsorted(np.cumsum(lens), np.flatnonzero(bad)[0], "right"))
        raise CorruptRLE("counts holds a character outside COCO's RLE alphabet", owner_at)
    c = raw - np.uint8(48)
    ends = c < 32  # bit 0x20 clear: the last character of a run
    last_c = np.cumsum(lens) - 1
    unfinished = (lens > 0) & ~ends[np.maximum(last_c, 0)]
    if unfinished.any():
        raise CorruptRLE("counts ends in the middle of a run", int(np.flatnonzero(unfinished)[0]))
    end_at = np.flatnonzero(ends)
    runs_per = np.zeros(n, dtype=np.int64)
    has = np.flatnonzero(lens)
    if len(has):
        runs_per[has] = np.add.reduceat(ends, (last_c - lens + 1)[has], dtype=np.int64)
    owner = np.repeat(np.arange(n), runs_per)
    c_end = c[end_at]
    x = (c_end & 0x1F).astype(np.int64)
    nchar = np.ones(len(x), dtype=np.int64)
    multi = np.flatnonzero(~ends[np.maximum(end_at - 1, 0)] & (end_at > 0))
    for k in range(1, 8):  # runs of several characters (5 more bits each), from the end
        if len(multi) == 0:
            break
        if k == 7:
            raise CorruptRLE("counts holds a run longer than 7 characters", int(owner[multi[0]]))
        x[multi] = (x[multi] << 5) | (c[end_at[multi] - k] & 0x1F)
        nchar[multi] += 1
        back = end_at[multi] - k - 1
        multi = multi[(back >= 0) & ~ends[np.maximum(back, 0)]]
    x -= ((c_end >> 4) & 1).astype(np.int64) << (5 * nchar)  # the sign bit of the last character
    # from the fourth run of an RLE on (m >= 3), a run is stored as the difference from run
    # m - 2. With Z the running sums of x over every second entry (Z[g] = x[g] + Z[g - 2],
    # two strided cumulative sums), a run at position m >= 1 of an RLE starting at entry f
    # is Z[g] minus Z just before its chain starts: Z[f - 1] for odd m, Z[f] for even m
    # (run 2 is stored as is); run 0 is x itself.
    z = np.empty(len(x) + 1, dtype=np.int64)
    z[0] = 0  # z[g + 1] = Z[g]; z[0] stands for Z[-1]
    z[1::2] = np.cumsum(x[0::2])
    z[2::2] = np.cumsum(x[1::2])
    first = np.cumsum(runs_per) - runs_per
    first_rep = np.repeat(first, runs_per)
    m = np.arange(len(x)) - first_rep
    runs = z[1:] - z[first_rep + 1 - (m & 1)]
    starts = first[runs_per > 0]
    runs[starts] = x[starts]
    return runs, owner, m


def _first(owner: NDArray[np.int64], bad: NDArray[np.bool_]) -> int:
    return int(owner[np.flatnonzero(bad)[0]])


def rle_area(rles: Sequence[dict[str, Any]]) -> NDArray[np.float64]:
    """Pixel counts of compressed COCO RLEs (the runs of 1s added up), validated.

    Equal to ``pycocotools.mask.area``, for any number of masks. Raises :class:`CorruptRLE`
    (with the position of the bad mask) for a negative run or runs that do not add up to
    ``h * w``.

    Example:
        >>> r = mask_to_rle(np.ones((2, 2), bool))
        >>> rle_area([to_rle(r, 2, 2)] * 300).sum()
        np.float64(1200.0)
    """
    n = len(rles)
    out = np.zeros(n)
    counts = [r["counts"] for r in rles]
    chars = np.cumsum(np.fromiter(map(len, counts), dtype=np.int64, count=n))
    start = 0
    while start < n:  # chunks of about a million characters: bounded memory, cache-sized
        stop = max(int(np.searchsorted(chars, chars[start] + _CHUNK_CHARS)), start + 1)
        try:
            out[start:stop] = _chunk_area(counts[start:stop], rles[start:stop])
        except CorruptRLE as e:
            raise CorruptRLE(e.reason, start + e.index) from None
        start = stop
    return out


_CHUNK_CHARS = 1 << 20


def _chunk_area(counts: Sequence[bytes], rles: Sequence[dict[str, Any]]) -> NDArray[np.float64]:
    n = len(counts)
    runs, owner, m = _runs(counts)
    if len(runs) and runs.min() < 0:
        raise CorruptRLE("counts decode to a negative run length", _first(owner, runs < 0))
    runs_per = np.bincount(owner, minlength=n)
    has = np.flatnonzero(runs_per)
    first = (np.cumsum(runs_per) - runs_per)[has]
    total = np.zeros(n, dtype=np.int64)
    area = np.zeros(n, dtype=np.int64)
    if len(has):
        total[has] = np.add.reduceat(runs, first)
        area[has] = np.add.reduceat(runs * (m & 1), first)
    size = np.array([int(r["size"][0]) * int(r["size"][1]) for r in rles], dtype=np.int64)
    wrong = np.flatnonzero(total != size)
    if len(wrong):
        i = int(wrong[0])
        raise CorruptRLE(
            f"runs add up to {int(total[i])} pixels, the size {list(rles[i]['size'])} "
            f"holds {int(size[i])}",
            i,
        )
    return area.astype(np.float64)


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


def polygon_to_rle(coco_polygons: Any, h: int, w: int) -> dict[str, Any]:
    """Rasterise COCO polygons (``[[x1, y1, x2, y2, ...], ...]``) as pycocotools does."""
    ok = (
        isinstance(coco_polygons, list)
        and len(coco_polygons) > 0
        and all(
            isinstance(p, list)
            and len(p) >= 6
            and len(p) % 2 == 0
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p)
            for p in coco_polygons
        )
    )
    if not ok:
        raise InvalidInputError("polygon must be lists of at least 3 (x, y) number pairs")
    if not np.isfinite(
        np.concatenate([np.asarray(p, dtype=np.float64) for p in coco_polygons])
    ).all():
        raise InvalidInputError("polygon coordinates must be finite")
    parts = mask_utils.frPyObjects(coco_polygons, h, w)
    while len(parts) > 1:  # merge in chunks (see the module docstring)
        parts = [
            mask_utils.merge(parts[i : i + PYCOCOTOOLS_CHUNK])
            for i in range(0, len(parts), PYCOCOTOOLS_CHUNK)
        ]
    return dict(parts[0])


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
