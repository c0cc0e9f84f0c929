"""COCO JSON: an annotations file (images, categories, annotations) and a results list.

Read as pycocotools' ``COCO`` and ``loadRes`` read them, but validated: every image and
category has an ``id`` (all integers or all strings, never mixed), sizes are non-negative
integers, a result's ``image_id`` and ``category_id`` have the type of the ground truth's
ids (``"1"`` is not image ``1``), boxes are finite with a finite corner and area, and masks
are checked run by run (:mod:`assay.io.masks`; boxes and masks in
:mod:`assay.io.coco_geometry`, re-exported here). Errors name the file, the record
(``image 3``, ``annotation 17`` = the position in the list) and the field.

The results file is decoded by msgspec straight into typed structs (no dict per result).

Example:
    >>> gt = {"images": [{"id": 1, "height": 4, "width": 4}], "annotations": [],
    ...       "categories": [{"id": 1, "name": "cat"}]}
    >>> images = coco_images(gt, source="gt.json")
    >>> images.ids.tolist(), images.heights.tolist()
    ([1], [4])
    >>> result_columns([{"image_id": "1", "category_id": 1, "score": 0.5, "bbox": [0, 0, 1, 1]}],
    ...     source="dt.json", image_ids=images.ids)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    assay.errors.InvalidInputError: dt.json: annotation 0: field 'image_id': ... is a string; ...
"""

from __future__ import annotations

import itertools
import re
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import numpy as np
from numpy.typing import NDArray

from assay.errors import InvalidInputError
from assay.io.jsonfiles import paused_gc, read_bytes, read_json

__all__ = [
    "AnnotationColumns",
    "ResultColumns",
    "CocoImages",
    "read_coco_annotations",
    "coco_images",
    "coco_categories",
    "read_coco_results",
    "result_columns",
    "id_kind",
]


class CocoImages(NamedTuple):
    """The images of an annotations file in ascending id order, with their sizes."""

    ids: NDArray[Any]
    heights: NDArray[np.int64]
    widths: NDArray[np.int64]


def id_kind(v: Any) -> str | None:
    """``"int"`` or ``"str"`` for a usable COCO id, None otherwise (bools, floats, ...)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return "int"
    return "str" if isinstance(v, str) else None


def read_coco_annotations(source: Any, *, columns: str | None = None) -> dict[str, Any]:
    """A COCO annotations object (``images``, ``annotations`` lists), from a path or a dict.

    ``columns="bbox"`` or ``"segm"``: when the file is a well-formed COCO file (integer image
    and category ids, every annotation with an integer ``image_id`` and ``category_id`` and a
    4-number ``bbox``), its annotations are decoded by msgspec straight into columns
    (:class:`AnnotationColumns`; with ``"bbox"`` the segmentations are skipped unparsed).
    Anything else is read as plain JSON and validated record by record (the precise errors).
    """
    name = str(source) if isinstance(source, (str, Path)) else "groundtruths"
    if columns is not None and isinstance(source, (str, Path)):
        raw = read_bytes(source)
        fast = _decode_annotations(raw, segm=columns == "segm") if raw.isascii() else None
        if fast is not None:
            return fast
        source = raw
    gt = read_json(source, name=name)
    if not isinstance(gt, dict) or "images" not in gt or "annotations" not in gt:
        hint = " (this looks like assay JSONL or a results list)" if isinstance(gt, list) else ""
        raise InvalidInputError(
            f"expected a COCO annotations object with 'images' and 'annotations'{hint}", source=name
        )
    for f in ("images", "annotations", "categories"):
        if not isinstance(gt.get(f, []), list):
            raise InvalidInputError("must be a list", source=name, field=f)
        for i, x in enumerate(gt.get(f, [])):
            if not isinstance(x, dict):
                raise InvalidInputError(
                    "must be a JSON object", source=name, record=f"{f[:-1]} {i}", field=f
                )
    return gt


class _BoxAnnotation(msgspec.Struct, gc=False):
    """A ground-truth annotation of a well-formed file; the segmentation left unparsed."""

    image_id: int
    category_id: int
    bbox: tuple[float, float, float, float]
    id: int | msgspec.UnsetType = msgspec.UNSET
    area: float | None = None
    iscrowd: int = 0
    segmentation: msgspec.Raw = msgspec.Raw(b"null")


class _MaskAnnotation(msgspec.Struct, gc=False):
    """The same, with the segmentation parsed (for masks)."""

    image_id: int
    category_id: int
    bbox: tuple[float, float, float, float]
    id: int | msgspec.UnsetType = msgspec.UNSET
    area: float | None = None
    iscrowd: int = 0
    segmentation: Any = None


class _BoxFile(msgspec.Struct):
    images: list[dict[str, Any]]
    annotations: list[_BoxAnnotation]
    categories: list[dict[str, Any]] = []


class _MaskFile(msgspec.Struct):
    images: list[dict[str, Any]]
    annotations: list[_MaskAnnotation]
    categories: list[dict[str, Any]] = []


_GT_DECODERS = {False: msgspec.json.Decoder(_BoxFile), True: msgspec.json.Decoder(_MaskFile)}


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


def _decode_annotations(raw: bytes, *, segm: bool) -> dict[str, Any] | None:
    """The file as ``{"images", "categories", "annotations": AnnotationColumns}``, or None
    when it is not a well-formed COCO file with integer ids (then the generic path reads it
    and names any problem)."""
    try:
        with paused_gc():
            f = _GT_DECODERS[segm].decode(raw)
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
    seg = list(map(attrgetter("segmentation"), anns)) if segm else None
    cols = AnnotationColumns(img, cat, ann_id, bbox, area, crowd, seg)
    return {"images": f.images, "categories": f.categories, "annotations": cols}


def _ids(items: list[dict[str, Any]], what: str, source: str) -> tuple[list[Any], str]:
    kinds = set()
    for i, x in enumerate(items):
        if "id" not in x:
            raise InvalidInputError(
                f"{what} has no id", source=source, record=f"{what} {i}", field="id"
            )
        k = id_kind(x["id"])
        if k is None:
            raise InvalidInputError(
                f"id must be an integer or a string, got {x['id']!r}",
                source=source,
                record=f"{what} {i}",
                field="id",
            )
        kinds.add(k)
        if len(kinds) > 1:
            raise InvalidInputError(
                f"{what} ids mix integers and strings (first mixed: {x['id']!r})",
                source=source,
                record=f"{what} {i}",
                field="id",
            )
    ids = [x["id"] for x in items]
    if len(set(ids)) != len(ids):
        dup = next(v for v in ids if ids.count(v) > 1)
        raise InvalidInputError(f"duplicate {what} id {dup!r}", source=source, field="id")
    return ids, (kinds.pop() if kinds else "int")


def coco_images(gt: dict[str, Any], *, source: str) -> CocoImages:
    """Image ids (ascending) and sizes (0 when absent), validated."""
    images = gt["images"]
    ids, _kind = _ids(images, "image", source)
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    sizes = np.zeros((2, len(ids)), np.int64)
    for j, i in enumerate(order):
        for r, f in enumerate(("height", "width")):
            v = images[i].get(f, 0)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise InvalidInputError(
                    f"must be a non-negative integer, got {v!r}",
                    source=source,
                    record=f"image {i}",
                    field=f,
                )
            sizes[r, j] = v
    arr = _id_array([ids[i] for i in order], _kind, source=source, field="id")
    return CocoImages(arr, sizes[0], sizes[1])


def coco_categories(gt: dict[str, Any], *, source: str) -> tuple[list[Any], list[str]]:
    """Category ids (ascending) and names (the ids as text when names repeat or are missing)."""
    cats = gt.get("categories", [])
    ids, _ = _ids(cats, "category", source)
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    cat_ids = [ids[i] for i in order]
    names = [str(cats[i].get("name", cats[i]["id"])) for i in order]
    if len(set(names)) != len(names):
        names = [str(c) for c in cat_ids]
    return cat_ids, names


class _Result(msgspec.Struct, gc=False):
    """One COCO result, decoded by msgspec straight from the JSON bytes."""

    image_id: int | str
    category_id: int | str
    score: float
    bbox: tuple[float, float, float, float] | None = None
    segmentation: Any = None


class _IntResult(msgspec.Struct, gc=False):
    """One COCO result with integer ids (the common case): its columns need no type check."""

    image_id: int
    category_id: int
    score: float
    bbox: tuple[float, float, float, float] | None = None
    segmentation: Any = None


_RESULTS = msgspec.json.Decoder(list[_Result])
_INT_RESULTS = msgspec.json.Decoder(list[_IntResult])


def read_coco_results(source: Any) -> list[Any] | ResultColumns:
    """A COCO results list: from a file, :class:`ResultColumns` when every result has integer
    ids, a finite score and a box (or none has a box), else typed structs; dicts as given
    otherwise.

    A ``{"annotations": [...]}`` object is accepted too (its annotations are the results).
    """
    name = str(source) if isinstance(source, (str, Path)) else "predictions"
    if isinstance(source, (str, Path)):
        raw = read_bytes(source)
        if not raw.isascii():
            read_json(raw, name=name)  # names an encoding problem (or malformed JSON)
        dt = _decode_results(raw, name) if raw.lstrip()[:1] == b"[" else read_json(raw, name=name)
    else:
        dt = source
    if isinstance(dt, ResultColumns):
        return dt
    if isinstance(dt, dict) and "images" in dt:
        raise InvalidInputError(
            "expected a JSON list of COCO results, got a COCO annotations file", source=name
        )
    if isinstance(dt, dict) and isinstance(dt.get("annotations"), list):
        dt = dt["annotations"]
    if not isinstance(dt, list):
        raise InvalidInputError("expected a JSON list of COCO results", source=name)
    return dt


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
        None if boxes[0] is None else np.concatenate(boxes),
        None if segms[0] is None else [x for seg in segms for x in seg or []],
    )


def _decode_results(raw: bytes, name: str) -> Any:
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
        if field in ("bbox", "image_id", "category_id") or not m:
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


def _typed_ids(values: list[Any], kind: str, *, source: str, field: str, what: str) -> NDArray[Any]:
    """The ids as an array, each of the ground truth's id type (``bool`` is not ``int``)."""
    want = int if kind == "int" else str
    if set(map(type, values)) <= {want}:  # the common case, checked at C speed
        return _id_array(values, kind, source=source, field=field)
    for i, v in enumerate(values):
        k = id_kind(v)
        if k != kind:
            shown = (
                "missing" if v is None else f"{v!r} is {'a string' if k == 'str' else 'not usable'}"
            )
            raise InvalidInputError(
                f"{shown}; the ground-truth {what} ids are "
                f"{'integers' if kind == 'int' else 'strings'}",
                source=source,
                record=f"annotation {i}",
                field=field,
            )
    return _id_array(values, kind, source=source, field=field)


def _id_array(values: list[Any], kind: str, *, source: str, field: str) -> NDArray[Any]:
    if kind == "str":
        return np.array(values, dtype=object)
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        i = next(i for i, v in enumerate(values) if not -(2**63) <= v < 2**63)
        raise InvalidInputError(
            f"id {values[i]} does not fit in 64 bits",
            source=source,
            record=f"annotation {i}",
            field=field,
        ) from None


def result_columns(
    dt: list[Any],
    *,
    source: str,
    image_ids: NDArray[Any],
    category_kind: str = "int",
) -> dict[str, Any]:
    """Columns of a results list (structs or dicts): image_id, category_id, score, bbox,
    segmentation. Ids must have the ground truth's id types; scores must be finite."""
    n = len(dt)
    img_kind = "str" if image_ids.dtype == object else "int"
    if isinstance(dt, ResultColumns):
        # integer ids: usable only if the ground truth's are too (else the first is wrong)
        _typed_ids(dt.image_id[:1].tolist(), img_kind, source=source, field="image_id",
                   what="image")  # fmt: skip
        _typed_ids(dt.category_id[:1].tolist(), category_kind, source=source,
                   field="category_id", what="category")  # fmt: skip
        return {
            "typed": True,
            "image_id": dt.image_id,
            "category_id": dt.category_id,
            "score": dt.score,
            "bbox": [None] * n if dt.bbox is None else dt.bbox,
            "segmentation": [None] * n if dt.segmentation is None else dt.segmentation,
        }
    if n and isinstance(dt[0], (_Result, _IntResult)):
        img = list(map(attrgetter("image_id"), dt))
        cat = list(map(attrgetter("category_id"), dt))
        score = np.fromiter(map(attrgetter("score"), dt), dtype=np.float64, count=n)
        bbox = list(map(attrgetter("bbox"), dt))
        seg = list(map(attrgetter("segmentation"), dt))
    else:
        for i, a in enumerate(dt):
            if not isinstance(a, dict) or "category_id" not in a:
                raise InvalidInputError(
                    "detection has no label (category_id)",
                    source=source,
                    record=f"annotation {i}",
                    field="category_id",
                )
        img = [a.get("image_id") for a in dt]
        cat = [a["category_id"] for a in dt]
        bad = [
            i
            for i, a in enumerate(dt)
            if not isinstance(a.get("score"), (int, float)) or isinstance(a.get("score"), bool)
        ]
        if bad:
            raise InvalidInputError(
                f"missing or non-numeric score {dt[bad[0]].get('score')!r}",
                source=source,
                record=f"annotation {bad[0]}",
                field="score",
            )
        score = np.array([a["score"] for a in dt], dtype=np.float64)
        bbox = [a.get("bbox") for a in dt]
        seg = [a.get("segmentation") for a in dt]
    if n and not np.isfinite(score).all():
        i = int(np.flatnonzero(~np.isfinite(score))[0])
        raise InvalidInputError(
            f"score must be finite, got {score[i]}",
            source=source,
            record=f"annotation {i}",
            field="score",
        )
    return {
        "typed": bool(n) and isinstance(dt[0], (_Result, _IntResult)),
        "image_id": _typed_ids(img, img_kind, source=source, field="image_id", what="image"),
        "category_id": _typed_ids(
            cat, category_kind, source=source, field="category_id", what="category"
        ),
        "score": score,
        "bbox": bbox,
        "segmentation": seg,
    }


class ResultColumns(NamedTuple):
    """COCO results as columns: integer ids, finite scores, ``(n, 4)`` boxes (None when no
    result has one), segmentations (None when none has one)."""

    image_id: NDArray[np.int64]
    category_id: NDArray[np.int64]
    score: NDArray[np.float64]
    bbox: NDArray[np.float64] | None
    segmentation: list[Any] | None

    def __len__(self) -> int:  # the number of results (not of columns)
        return len(self.score)


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
    segm = None if seg.count(None) == n else seg
    return ResultColumns(img, cat, score, bbox, segm)
