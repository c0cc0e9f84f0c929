"""COCO files decoded by msgspec straight into columns: the fast path of :mod:`assay.io.coco`.

A well-formed annotations file (integer image and category ids, every annotation with an
integer ``image_id`` and ``category_id`` and a 4-number ``bbox``) becomes
:class:`AnnotationColumns`; a results list with integer ids and finite scores becomes
:class:`ResultColumns`, decoded a few MB at a time so that at most one chunk's Python
objects exist at once; their compressed RLEs become :class:`RLEColumns` (every mask's counts
joined in one byte string, and the sizes: no object per mask). When the compiled kernels are
built (:mod:`assay.io.native`), a results file of that shape is read by them instead, with
no Python object per result and the same columns. Whatever does not fit the typed shape
gives None (or, for results, typed structs or plain JSON), and the generic reader of
:mod:`assay.io.coco` validates it record by record and names the file, record and field
(only a missing or mistyped field of an otherwise typed results list is named here).

Example:
    >>> raw = b'[{"image_id": 1, "category_id": 2, "score": 0.5, "bbox": [0, 0, 2, 3]}]'
    >>> cols = decode_results(raw, "dt.json")
    >>> cols.image_id.tolist(), cols.bbox.tolist(), cols.segmentation
    ([1], [[0.0, 0.0, 2.0, 3.0]], None)
    >>> decode_annotations(b'{"images": [], "annotations": [{"image_id": "1"}]}', segm=False)
"""

from __future__ import annotations

import itertools
import re
from operator import attrgetter
from typing import Any, NamedTuple

import msgspec
import numpy as np
from numpy.typing import NDArray

from assay.errors import InvalidInputError
from assay.io.jsonfiles import paused_gc, read_json
from assay.io.native import kernels

__all__ = [
    "AnnotationColumns",
    "ResultColumns",
    "MaskRLE",
    "RLEColumns",
    "decode_annotations",
    "decode_results",
    "is_result_struct",
    "struct_columns",
]


class AnnotationColumns(NamedTuple):
    """The annotations of a well-formed COCO file as columns (no object per annotation).

    ``area`` is NaN where the file gives none; ``segmentation`` is None unless decoded for
    masks."""

    image_id: NDArray[np.int64]
    category_id: NDArray[np.int64]
    ann_id: NDArray[np.int64]
    bbox: NDArray[np.float64]
    area: NDArray[np.float64]
    crowd: NDArray[np.bool_]
    segmentation: list[Any] | None


class ResultColumns(NamedTuple):
    """COCO results as columns: integer ids, finite scores, ``(n, 4)`` boxes (None when no
    result has one), segmentations (None when none has one)."""

    image_id: NDArray[np.int64]
    category_id: NDArray[np.int64]
    score: NDArray[np.float64]
    bbox: NDArray[np.float64] | None
    segmentation: RLEColumns | list[Any] | None

    def __len__(self) -> int:  # the number of results (not of columns)
        return len(self.score)


class MaskRLE(msgspec.Struct, gc=False):
    """A COCO RLE as decoded here: ``size`` ``(h, w)`` and ``counts`` (compressed or not)."""

    size: tuple[int, int]
    counts: str | list[int]

    def as_dict(self) -> dict[str, Any]:
        """The RLE as COCO writes it (``{"size": [h, w], "counts": ...}``)."""
        return {"size": list(self.size), "counts": self.counts}


class RLEColumns(NamedTuple):
    """Compressed RLEs as columns: every mask's counts joined in one ASCII byte string
    (mask ``i`` ends at ``ends[i]``) and ``(n, 2)`` sizes; no object per mask. ``area``:
    each mask's pixel count when the compiled scanner measured it while reading (NaN for a
    corrupt mask), else None."""

    data: bytes
    ends: NDArray[np.int64]
    size: NDArray[np.int64]
    area: NDArray[np.float64] | None = None

    def __len__(self) -> int:  # the number of masks
        return len(self.ends)

    @property
    def counts(self) -> list[bytes]:
        """Each mask's counts (bytes, as pycocotools takes them)."""
        data, ends = self.data, self.ends.tolist()
        return [data[a:b] for a, b in zip([0, *ends[:-1]], ends)]

    def rles(self, sizes: list[Any]) -> list[dict[str, Any]]:
        """Each mask as the dict pycocotools takes (``{"size": sizes[i], "counts": bytes}``,
        the size objects shared as given), built by the compiled kernels when there."""
        k = kernels()
        if k is not None:
            return k.rle_dicts(self.data, np.ascontiguousarray(self.ends, np.int64), sizes)
        return [{"size": s, "counts": c} for s, c in zip(sizes, self.counts)]

    def as_dicts(self) -> list[dict[str, Any]]:
        """The RLEs as COCO writes them (``{"size": [h, w], "counts": ...}``)."""
        return [{"size": s, "counts": c.decode()} for s, c in zip(self.size.tolist(), self.counts)]

    @staticmethod
    def of(segms: list[Any]) -> RLEColumns | None:
        """The columns of decoded segmentations when all are compressed RLEs of ASCII
        counts, else None.

        Example:
            >>> cols = RLEColumns.of([MaskRLE((2, 2), "04"), MaskRLE((1, 3), "12")])
            >>> cols.counts, cols.size.tolist()
            ([b'04', b'12'], [[2, 2], [1, 3]])
        """
        n = len(segms)
        try:  # None and polygons have neither
            counts = list(map(attrgetter("counts"), segms))
            sizes = list(map(attrgetter("size"), segms))
        except AttributeError:
            return None
        if set(map(type, counts)) != {str}:
            return None
        text = "".join(counts)
        if not text.isascii():
            return None
        ends = np.cumsum(np.fromiter(map(len, counts), dtype=np.int64, count=n))
        try:
            hw = np.fromiter(itertools.chain.from_iterable(sizes), dtype=np.int64, count=2 * n)
        except OverflowError:  # a size past int64: the generic reader names it
            return None
        return RLEColumns(text.encode(), ends, hw.reshape(n, 2))

    @staticmethod
    def concat(parts: list[Any]) -> Any:
        """The segmentations of consecutive chunks, as columns when every chunk's are."""
        if all(isinstance(p, RLEColumns) for p in parts):
            shift = np.cumsum([0] + [len(p.data) for p in parts[:-1]])
            areas = [p.area for p in parts]
            return RLEColumns(
                b"".join(p.data for p in parts),
                np.concatenate([p.ends + k for p, k in zip(parts, shift.tolist())]),
                np.concatenate([p.size for p in parts]),
                None if any(a is None for a in areas) else np.concatenate(areas),
            )
        return [x for p in parts for x in (p.as_dicts() if isinstance(p, RLEColumns) else p)]


# a segmentation: an RLE, polygons, or none; anything else goes to the generic reader
_Segmentation = MaskRLE | list[list[float]] | None
_SEGMENTATIONS = msgspec.json.Decoder(list[_Segmentation])


class _Annotation(msgspec.Struct, gc=False):
    """A ground-truth annotation of a well-formed file; its segmentation left as raw JSON
    (decoded, all at once, only for masks)."""

    image_id: int
    category_id: int
    bbox: tuple[float, float, float, float]
    id: int | msgspec.UnsetType = msgspec.UNSET
    area: float | None = None
    iscrowd: int = 0
    segmentation: msgspec.Raw = msgspec.Raw(b"null")


class _AnnotationFile(msgspec.Struct):
    images: list[dict[str, Any]]
    annotations: list[_Annotation]
    categories: list[dict[str, Any]] = []


_GT = msgspec.json.Decoder(_AnnotationFile)


def decode_annotations(raw: bytes, *, segm: bool) -> dict[str, Any] | None:
    """The file as ``{"images", "categories", "annotations": AnnotationColumns}``, or None
    when it is not a well-formed COCO file with integer ids (then the generic path reads it
    and names any problem). ``segm``: decode the segmentations too (else they stay unparsed).
    """
    try:
        with paused_gc():
            f = _GT.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    for items in (f.images, f.categories):  # the ground truth's own ids: integers here
        if not all(type(x.get("id")) is int for x in items):
            return None
    anns = f.annotations
    n = len(anns)
    try:
        img = np.fromiter(map(attrgetter("image_id"), anns), dtype=np.int64, count=n)
        cat = np.fromiter(map(attrgetter("category_id"), anns), dtype=np.int64, count=n)
        ids = list(map(attrgetter("id"), anns))
        if msgspec.UNSET in ids:  # pycocotools numbers annotations without an id from 1
            ids = [i + 1 if v is msgspec.UNSET else v for i, v in enumerate(ids)]
        ann_id = np.array(ids, dtype=np.int64).reshape(n)
        crowd = np.fromiter(map(attrgetter("iscrowd"), anns), dtype=np.int64, count=n) != 0
    except OverflowError:
        return None
    boxes = itertools.chain.from_iterable(map(attrgetter("bbox"), anns))
    bbox = np.fromiter(boxes, dtype=np.float64, count=4 * n).reshape(n, 4)
    given = list(map(attrgetter("area"), anns))
    area = np.array(given, dtype=np.float64).reshape(n)  # None -> NaN
    seg = None
    if segm:  # every segmentation in one decode: a JSON list of the raw texts
        joined = b"[" + b",".join(map(attrgetter("segmentation"), anns)) + b"]"
        try:
            with paused_gc():
                seg = _SEGMENTATIONS.decode(joined)
        except msgspec.ValidationError:
            return None
    cols = AnnotationColumns(img, cat, ann_id, bbox, area, crowd, seg)
    return {"images": f.images, "categories": f.categories, "annotations": cols}


class _Result(msgspec.Struct, gc=False):
    """One COCO result, decoded by msgspec straight from the JSON bytes."""

    image_id: int | str
    category_id: int | str
    score: float
    bbox: tuple[float, float, float, float] | None = None
    segmentation: _Segmentation = None


class _IntResult(msgspec.Struct, gc=False):
    """One COCO result with integer ids (the common case): its columns need no type check."""

    image_id: int
    category_id: int
    score: float
    bbox: tuple[float, float, float, float] | None = None
    segmentation: _Segmentation = None


_RESULTS = msgspec.json.Decoder(list[_Result])
_INT_RESULTS = msgspec.json.Decoder(list[_IntResult])


def is_result_struct(x: Any) -> bool:
    """Whether ``x`` is a result decoded here (typed: its fields need no type check)."""
    return isinstance(x, (_Result, _IntResult))


def struct_columns(dt: list[Any]) -> tuple[list[Any], list[Any], NDArray[np.float64], list[Any],
                                           list[Any]]:  # fmt: skip
    """Image ids, category ids, scores, boxes and segmentations of decoded results."""
    n = len(dt)
    return (
        list(map(attrgetter("image_id"), dt)),
        list(map(attrgetter("category_id"), dt)),
        np.fromiter(map(attrgetter("score"), dt), dtype=np.float64, count=n),
        list(map(attrgetter("bbox"), dt)),
        list(map(attrgetter("segmentation"), dt)),
    )


_CHUNK_BYTES = 1 << 22
_BETWEEN = re.compile(rb"\}\s*,\s*\{")  # between two results (or a wrong guess: see below)


def _chunked_columns(raw: bytes) -> ResultColumns | None:
    """The columns of a results list with integer ids, decoded a few MB at a time, so that
    at most one chunk's Python objects exist at once; None if that does not apply.

    The list is cut after a ``}``, before a ``{``, with only a comma between them. A cut
    that is not between two results (inside a string or a nested list) leaves an unbalanced
    chunk, which fails to decode: then None, and the caller decodes the whole file.
    """
    start, stop = raw.find(b"[") + 1, raw.rfind(b"]")
    if start == 0 or stop < start or raw[stop + 1 :].strip():
        return None
    cuts, pos = [start], start + _CHUNK_BYTES
    while pos < stop and (m := _BETWEEN.search(raw, pos, stop)) is not None:
        cuts += [m.start() + 1, m.end() - 1]
        pos = m.end() + _CHUNK_BYTES
    cuts.append(stop)
    parts = []
    try:
        for a, b in zip(cuts[::2], cuts[1::2]):
            # the collector stays paused until the structs are gone: their box tuples then
            # never cost a collection
            with paused_gc():
                part = _int_result_columns(_INT_RESULTS.decode(b"[" + raw[a:b] + b"]"))
            if part is None:
                return None
            parts.append(part)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    if len(parts) == 1:
        return parts[0]
    boxes = [p.bbox for p in parts]
    segms = [p.segmentation for p in parts]
    if len({b is None for b in boxes}) > 1 or len({x is None for x in segms}) > 1:
        return None  # boxes or masks in some chunks only
    return ResultColumns(
        np.concatenate([p.image_id for p in parts]),
        np.concatenate([p.category_id for p in parts]),
        np.concatenate([p.score for p in parts]),
        None if boxes[0] is None else np.concatenate([b for b in boxes if b is not None]),
        None if segms[0] is None else RLEColumns.concat(segms),
    )


def decode_results(raw: bytes, name: str) -> Any:
    """A JSON results list (``raw``, ASCII, starting with ``[``) as :class:`ResultColumns`
    when every result has integer ids, a finite score and a box (or none has a box); else as
    typed structs (string ids); else as plain JSON for the generic reader. A problem the
    generic reader would not name as well (a missing score, say) is an
    :class:`~assay.errors.InvalidInputError` naming ``name``, the record and the field."""
    cols = _native_columns(raw)
    if cols is None:
        cols = _chunked_columns(raw)
    if cols is not None:
        return cols
    try:
        with paused_gc():
            structs = _INT_RESULTS.decode(raw)
            cols = _int_result_columns(structs)
            if cols is None:
                return structs
            del structs
            return cols
    except (msgspec.ValidationError, msgspec.DecodeError):
        pass  # string ids, or a problem the next decoders name
    try:
        with paused_gc():
            return _RESULTS.decode(raw)
    except msgspec.ValidationError as e:
        m = re.search(r"\$\[(\d+)\](?:\.(\w+))?", str(e))
        field = m.group(2) if m and m.group(2) else None
        if field in ("bbox", "image_id", "category_id", "segmentation") or not m:
            return read_json(raw, name=name)  # the generic path reports these precisely
        reason = str(e).split(" - at ")[0]
        if "missing required field" in reason:
            field = reason.split("`")[1] if "`" in reason else field
            reason = "missing required field" + (" (label)" if field == "category_id" else "")
        raise InvalidInputError(
            reason, source=name, record=f"annotation {m.group(1)}", field=field
        ) from None
    except msgspec.DecodeError:
        return read_json(raw, name=name)  # names the encoding problem or the JSON error


def _native_columns(raw: bytes) -> ResultColumns | None:
    """The columns read by the compiled scanner (:mod:`assay.io.native`), or None when it is
    not built, turned off, or the file is not of the shape it reads (then msgspec reads it,
    with the same results)."""
    k = kernels()
    got = None if k is None else k.scan_results(raw)
    if got is None:
        return None
    n, img, cat, score, bbox, counts, ends, sizes, areas = got

    def column(b: bytes, dtype: Any) -> NDArray[Any]:
        return np.frombuffer(b, dtype).copy()  # writable, as msgspec's columns are

    seg = None
    if counts is not None and ends is not None and sizes is not None and areas is not None:
        size = column(sizes, np.int64).reshape(n, 2)
        seg = RLEColumns(counts, column(ends, np.int64), size, column(areas, np.float64))
    return ResultColumns(
        column(img, np.int64),
        column(cat, np.int64),
        column(score, np.float64),
        None if bbox is None else column(bbox, np.float64).reshape(n, 4),
        seg,
    )


def _int_result_columns(dt: list[Any]) -> ResultColumns | None:
    """The columns of results decoded with integer ids; None if an id overflows int64, a
    score is not finite or only some results have a box (the general path names these)."""
    n = len(dt)
    if n == 0:
        return None
    try:
        img = np.fromiter(map(attrgetter("image_id"), dt), dtype=np.int64, count=n)
        cat = np.fromiter(map(attrgetter("category_id"), dt), dtype=np.int64, count=n)
    except OverflowError:
        return None
    score = np.fromiter(map(attrgetter("score"), dt), dtype=np.float64, count=n)
    if not np.isfinite(score).all():
        return None
    boxes = list(map(attrgetter("bbox"), dt))
    n_box = n - boxes.count(None)
    if n_box not in (0, n):
        return None
    bbox = None
    if n_box:
        flat = itertools.chain.from_iterable(boxes)
        bbox = np.fromiter(flat, dtype=np.float64, count=4 * n).reshape(n, 4)
    del boxes
    seg = list(map(attrgetter("segmentation"), dt))
    if seg.count(None) == n:
        return ResultColumns(img, cat, score, bbox, None)
    return ResultColumns(img, cat, score, bbox, RLEColumns.of(seg) or seg)
